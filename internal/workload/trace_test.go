package workload

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

func shipped(name string) string { return filepath.Join("testdata", "traces", name) }

// writeTrace writes body to a file named name in a fresh directory.
func writeTrace(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll reads every request of a trace.
func readAll(t *testing.T, path, format string) ([]TraceRequest, *TraceReader, error) {
	t.Helper()
	r, err := OpenTrace(path, format)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []TraceRequest
	for {
		q, err := r.Next()
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			return out, r, err
		}
		out = append(out, q)
	}
}

// The shipped traces are read in each format, told by their content, and
// agree with the generator's requests.
func TestTraceShipped(t *testing.T) {
	rows := generateRows()
	for _, c := range []struct {
		file, format string
		skipped      int
	}{
		{"mooncake.jsonl", record.TraceMooncake, 0},
		{"azure.csv", record.TraceAzure, 0},
		{"burstgpt.csv", record.TraceBurstGPT, 1}, // one failed request with no response tokens
	} {
		got, r, err := readAll(t, shipped(c.file), "")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if r.Format != c.format || r.Skipped != c.skipped || len(got) != len(rows)-c.skipped {
			t.Fatalf("%s: format %q, %d requests, %d skipped; want %q, %d, %d", c.file, r.Format, len(got), r.Skipped, c.format, len(rows)-c.skipped, c.skipped)
		}
		first := got[0].At
		for i, q := range got {
			want := rows[i]
			if i >= 5 && c.skipped > 0 {
				want = rows[i+1]
			}
			at := q.At - first
			if c.format == record.TraceBurstGPT { // whole seconds
				at, want.at = at.Truncate(time.Second), want.at.Truncate(time.Second)
			}
			if c.format == record.TraceMooncake {
				want.at = want.at.Truncate(time.Millisecond)
			}
			if at != want.at || q.Input != want.in || q.Output != want.out || q.Line != int64(i+1+min(c.skipped, 1)*bool2int(i >= 5))+header(c.format) {
				t.Errorf("%s request %d: %+v (at %v), want %+v", c.file, i, q, at, want)
				break
			}
		}
		if c.format == record.TraceBurstGPT && (len(got[0].Labels) != 2 || got[0].Labels[0] != "model=ChatGPT" || got[0].Labels[1] != "log_type=Conversation log") {
			t.Errorf("burstgpt labels: %q", got[0].Labels)
		}
	}
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

func header(format string) int64 {
	if format == record.TraceMooncake {
		return 0
	}
	return 1
}

// Each bad input is refused with its line named, or corrected as
// docs/WORKLOADS.md says.
func TestTraceBad(t *testing.T) {
	for _, c := range []struct {
		name, file, body, format string
		want                     string // in the error; "" for none
	}{
		{"unsorted", "m.jsonl", mc(0, 10, 5) + mc(500, 10, 5) + mc(400, 10, 5), "", "m.jsonl:3: timestamp 400ms is before the previous request's (500ms)"},
		{"negative time", "m.jsonl", mc(-5, 10, 5), "", "m.jsonl:1: negative timestamp"},
		{"negative length", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,-3,4\n", "", "a.csv:2: negative length"},
		{"missing column", "a.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.6805900,3\n", record.TraceAzure, `a.csv:1: missing column "GeneratedTokens"`},
		{"missing burst column", "b.csv", "Timestamp,Model,Request tokens,Log Type\n1,ChatGPT,3,x\n", "", `b.csv:1: missing column "Response tokens"`},
		{"missing field", "m.jsonl", `{"timestamp": 1, "input_length": 3}` + "\n", "", `m.jsonl:1: missing "output_length"`},
		{"not json", "m.jsonl", mc(0, 1, 1) + "{oops\n", "", "m.jsonl:2: not a Mooncake trace line"},
		{"bad date", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,3,4\n", "", `a.csv:2: TIMESTAMP "yesterday": not a date and time`},
		{"bad number", "b.csv", "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,3.5,4\n", "", `b.csv:2: Request tokens "3.5": not a whole number`},
		{"short row", "b.csv", "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT\n", "", "b.csv:2: 2 fields, the header has 4"},
		{"unknown", "x.txt", "hello,world\n1,2\n", "", "x.txt:1: cannot tell the trace's format"},
		{"empty", "x.txt", "\n\n", "", "x.txt:1: the trace is empty"},
		{"huge length", "m.jsonl", mc(0, 1<<40, 5), "", "m.jsonl:1: length beyond"},
		{"long line", "m.jsonl", `{"timestamp": 0, "hash_ids": [` + strings.Repeat("1, ", maxTraceLine/3) + "1]}\n", "", "m.jsonl:1: line longer than"},
		{"zero lengths skipped", "m.jsonl", mc(0, 0, 5) + mc(1, 5, 0) + mc(2, 5, 5), "", ""},
	} {
		path := writeTrace(t, c.file, c.body)
		_, _, err := readAll(t, path, c.format)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), filepath.Dir(path)+"/"+c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// mc is a Mooncake line without hash ids.
func mc(ms, in, out int64) string {
	return `{"timestamp": ` + itoa(ms) + `, "input_length": ` + itoa(in) + `, "output_length": ` + itoa(out) + "}\n"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The window, speed and cap choose the requests and their offsets; the
// shape counts what the window holds.
func TestScanTraceWindow(t *testing.T) {
	body := mc(1000, 10, 5) + mc(2000, 20, 5) + mc(2500, 30, 5) + mc(4000, 40, 5) + mc(9000, 50, 5)
	path := writeTrace(t, "m.jsonl", body)
	for _, c := range []struct {
		name    string
		o       TraceOptions
		offsets []time.Duration
		lines   []int64
	}{
		// the first request of the window goes at once, the rest keep their gaps
		{"all", TraceOptions{}, []time.Duration{0, time.Second, 1500 * time.Millisecond, 3 * time.Second, 8 * time.Second}, []int64{1, 2, 3, 4, 5}},
		{"twice as fast", TraceOptions{Speed: 2}, []time.Duration{0, 500 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond, 4 * time.Second}, []int64{1, 2, 3, 4, 5}},
		// from 1 s after the first request, for 2 s: lines 2 to 3 (4 is at 3 s)
		{"window", TraceOptions{Start: time.Second, Duration: 2 * time.Second}, []time.Duration{0, 500 * time.Millisecond}, []int64{2, 3}},
		{"max", TraceOptions{Max: 2, Start: 1500 * time.Millisecond}, []time.Duration{0, 2 * time.Second}, []int64{4, 5}[:0:0]},
	} {
		c.o.Path = path
		tr, err := ScanTrace(c.o)
		if c.name == "max" {
			// from 1.5 s: lines 3 and 4
			c.offsets, c.lines = []time.Duration{0, 1500 * time.Millisecond}, []int64{3, 4}
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var offs []time.Duration
		var lines []int64
		if err := tr.Arrivals(func(off time.Duration, line int64) bool {
			offs, lines = append(offs, off), append(lines, line)
			return true
		}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !equal(offs, c.offsets) || !equal(lines, c.lines) || tr.Shape.Requests != len(c.lines) || tr.Last != c.offsets[len(c.offsets)-1] {
			t.Errorf("%s: offsets %v lines %v (shape %d requests, last %v), want %v %v", c.name, offs, lines, tr.Shape.Requests, tr.Last, c.offsets, c.lines)
		}
	}
	if _, err := ScanTrace(TraceOptions{Path: path, Start: time.Hour}); err == nil || !strings.Contains(err.Error(), "no request to replay in the window") {
		t.Errorf("an empty window: %v", err)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The reuse is the share of prompt tokens in blocks an earlier request
// had; a partial last block counts its own tokens.
func TestScanTraceReuse(t *testing.T) {
	body := `{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [1, 2]}
{"timestamp": 10, "input_length": 1536, "output_length": 5, "hash_ids": [1, 2, 3]}
{"timestamp": 20, "input_length": 600, "output_length": 5, "hash_ids": [1, 4]}
`
	tr, err := ScanTrace(TraceOptions{Path: writeTrace(t, "m.jsonl", body)})
	if err != nil {
		t.Fatal(err)
	}
	// request 2 reuses blocks 1 and 2 (1024 tokens), request 3 block 1 (512)
	want := float64(1024+512) / float64(1000+1536+600)
	if tr.Shape.Reuse == nil || *tr.Shape.Reuse != want {
		t.Errorf("reuse %v, want %v", tr.Shape.Reuse, want)
	}
	if tr.Shape.Longest != 1541 || tr.Shape.LongestLine != 2 || tr.Shape.BlockSize != DefaultTraceBlockSize {
		t.Errorf("longest %d at line %d, block size %d", tr.Shape.Longest, tr.Shape.LongestLine, tr.Shape.BlockSize)
	}
	if err := tr.CheckContext(1024); err == nil || !strings.Contains(err.Error(), "m.jsonl:2: a request of 1541 tokens") {
		t.Errorf("context: %v", err)
	}
	// ids beyond what the prompt fills: a wrong block size
	_, err = ScanTrace(TraceOptions{Path: writeTrace(t, "m.jsonl", body), BlockSize: 1024})
	if err == nil || !strings.Contains(err.Error(), "m.jsonl:1: 2 hash_ids, but input_length 1000 fills 1 blocks of 1024 tokens") {
		t.Errorf("block size: %v", err)
	}
}

// The shipped traces' shapes: counts, bins, reuse and labels.
func TestScanTraceShipped(t *testing.T) {
	m, err := ScanTrace(TraceOptions{Path: shipped("mooncake.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, a := range m.Shape.Arrivals {
		sum += a
	}
	if m.Shape.Requests != generatedRequests || sum != generatedRequests || m.Shape.BinS != 1 || m.Shape.Reuse == nil || *m.Shape.Reuse < 0.3 {
		t.Errorf("mooncake shape: %+v", m.Shape)
	}
	b, err := ScanTrace(TraceOptions{Path: shipped("burstgpt.csv"), Speed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if b.Shape.Skipped != 1 || b.Shape.SkippedFirstLine != 7 || b.Shape.Labels["model=GPT-4"] == 0 || b.Shape.Reuse != nil || b.Shape.Speed != 4 {
		t.Errorf("burstgpt shape: %+v", b.Shape)
	}
	var te *TraceError
	if _, err := ScanTrace(TraceOptions{Path: shipped("nope.csv")}); err == nil || errors.As(err, &te) {
		t.Errorf("a missing file: %v", err)
	}
}
