package enginecheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

const msNS = int64(1e6)

// req is a request that took 50 ms to its first token and then decoded 64
// tokens at 100 tok/s as the client saw them; the server saw 101 tok/s.
func req(id int64, api string, conc int) record.Record {
	r := record.Record{
		Schema: record.Schema, ID: id, Phase: record.PhaseMeasured, API: api,
		Load: record.Load{Concurrency: conc}, PromptTokens: 128, OutputTokens: 64,
		SentNS: 1000 * msNS * id, FirstTokenNS: 1000*msNS*id + 50*msNS, EndNS: 1000*msNS*id + 50*msNS + 630*msNS,
	}
	if strings.HasPrefix(api, "ollama") {
		r.Server = &record.ServerTiming{PromptEvalCount: 128, PromptEvalDuration: 40 * msNS,
			EvalCount: 64, EvalDuration: secs(64 / 101.0)}
	}
	return r
}

func secs(s float64) int64 { return int64(s * 1e9) }

// point is n requests at one load point.
func point(api string, conc, n int, edit func(i int, r *record.Record)) []record.Record {
	var rs []record.Record
	for i := range n {
		r := req(int64(i+1), api, conc)
		if conc == 4 {
			r.Point = 1
		}
		if edit != nil {
			edit(i, &r)
		}
		rs = append(rs, r)
	}
	return rs
}

func writeRun(t *testing.T, recs ...[]record.Record) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, rundir.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	w := record.NewWriter(f)
	for g, rs := range recs {
		for i := range rs {
			// ids are unique in a run (a repeated one is dropped on
			// reading): each later group's are 1000 further on
			rs[i].ID += int64(1000 * g)
			if err := w.Write(&rs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheck(t *testing.T) {
	native := func(edit func(i int, r *record.Record)) []record.Record {
		return point("ollama-chat", 1, 5, edit)
	}
	for _, c := range []struct {
		name string
		runs [][][]record.Record // runs, each a list of load points
		opts Options
		ok   bool
		want []string // substrings of the report
	}{
		{
			// Both APIs at concurrency 1 and 4, all consistent.
			name: "pass",
			ok:   true,
			runs: [][][]record.Record{
				{point("openai-chat", 1, 5, nil), point("openai-chat", 4, 5, nil)},
				{native(nil), point("ollama-chat", 4, 5, nil)},
			},
			opts: Options{WantRequests: 5},
			want: []string{"enginecheck: ok, 4 load points", "100.0 tok/s", "101.0 tok/s"},
		},
		{
			// A failed request fails the run, whatever else holds.
			name: "error",
			runs: [][][]record.Record{{native(func(i int, r *record.Record) {
				if i == 2 {
					r.Error = &record.Error{Class: record.ClassHTTP5xx, Message: "boom", Status: 500}
				}
			})}},
			want: []string{"errors: request 3 failed: http_5xx: boom", "enginecheck: FAIL, 1 problems"},
		},
		{
			// A first token before the server finished the prompt is impossible.
			name: "ttft",
			runs: [][][]record.Record{{native(func(i int, r *record.Record) {
				r.Server.PromptEvalDuration = 60 * msNS
			})}},
			want: []string{"ttft: request 1: client TTFT 50.0 ms is less than the server's prompt_eval_duration 60.0 ms"},
		},
		{
			// The client counted one token too many.
			name: "counts",
			runs: [][][]record.Record{{native(func(i int, r *record.Record) {
				if i == 0 {
					r.OutputTokens = 65
				}
			})}},
			want: []string{"counts: request 1: 65 output tokens recorded, the server says eval_count 64"},
		},
		{
			// The client's decode is 20% slower than the server's: buffering.
			name: "decode",
			runs: [][][]record.Record{{native(func(i int, r *record.Record) {
				r.EndNS = r.FirstTokenNS + secs(63/80.0)
			})}},
			want: []string{"decode: median client decode 80.0 tok/s differs from the server's 101.0 tok/s by -20.8%"},
		},
		{
			// The same difference passes with a wider tolerance.
			name: "decode tolerance",
			ok:   true,
			runs: [][][]record.Record{{native(func(i int, r *record.Record) {
				r.EndNS = r.FirstTokenNS + secs(63/80.0)
			})}},
			opts: Options{DecodeTolerance: 0.25},
			want: []string{"enginecheck: ok"},
		},
		{
			// Native API records without the server's timings cannot be checked.
			name: "no server",
			runs: [][][]record.Record{{point("ollama-chat", 1, 8, func(i int, r *record.Record) { r.Server = nil })}},
			// Five of a check's problems are listed, the rest counted.
			want: []string{"server: request 5: no server timings", "server: … and 3 more", "decode: no measured request"},
		},
		{
			// Only the OpenAI API: nothing to compare with, which is a failure.
			name: "nothing compared",
			runs: [][][]record.Record{{point("openai-chat", 1, 3, nil)}},
			want: []string{"FAIL no load point at concurrency 1 with server timings"},
		},
		{
			// An empty records file is a failed run, not a pass.
			name: "empty",
			runs: [][][]record.Record{{}, {native(nil)}},
			want: []string{"no records: the run recorded no request"},
		},
		{
			// Fewer requests than asked for were recorded.
			name: "missing requests",
			runs: [][][]record.Record{{native(nil)}},
			opts: Options{WantRequests: 6},
			want: []string{"requests: 5 measured requests recorded, want 6"},
		},
		{
			// Warm-up requests are checked but not counted as measured.
			name: "warmup",
			ok:   true,
			runs: [][][]record.Record{{native(func(i int, r *record.Record) {
				if i == 0 {
					r.Phase = record.PhaseWarmup
				}
			})}},
			opts: Options{WantRequests: 4},
			want: []string{"5 (4 measured)", "enginecheck: ok"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var dirs []string
			for _, run := range c.runs {
				dirs = append(dirs, writeRun(t, run...))
			}
			res, err := Check(dirs, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Render(&out, res); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if res.OK() != c.ok {
				t.Errorf("OK() = %v, want %v\n%s", res.OK(), c.ok, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("report lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestCheckUnreadable(t *testing.T) {
	// No directories and a missing one are errors.
	if _, err := Check(nil, Options{}); err == nil {
		t.Error("no dirs: no error")
	}
	if _, err := Check([]string{filepath.Join(t.TempDir(), "absent")}, Options{}); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("missing dir: %v", err)
	}
}

// TestCheckReadsAsReportDoes: a run directory is read as servebench
// report reads it: a damaged line is skipped with a warning naming it,
// a repeated record is dropped with a warning, and a sped-up simulator's
// records are checked in model time.
func TestCheckReadsAsReportDoes(t *testing.T) {
	dir := writeRun(t, point("openai-chat", 1, 3, nil))
	f, err := os.OpenFile(filepath.Join(dir, rundir.RecordsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	dup := req(1, "openai-chat", 1)
	w := record.NewWriter(f)
	f.WriteString("not json\n")
	w.Write(&dup)
	f.Close()
	os.WriteFile(filepath.Join(dir, rundir.RunFile), []byte(`{"schema":"servebench.run/v1","time_scale":10}`), 0o644)
	res, err := Check([]string{dir}, Options{})
	if err != nil {
		t.Fatalf("a damaged line must not make the run unreadable: %v", err)
	}
	var out strings.Builder
	Render(&out, res)
	if !strings.Contains(out.String(), "skipped 1 damaged line(s), not counted: line 4") ||
		!strings.Contains(out.String(), "dropped 1 duplicated record(s), counted once: line 5") {
		t.Errorf("the warnings do not name the damaged and the repeated line:\n%s", out.String())
	}
	if len(res.Groups) != 1 || len(res.Groups[0].Records) != 3 {
		t.Fatalf("groups %+v: want one load point with its 3 records", res.Groups)
	}
	if r, want := res.Groups[0].Records[0], dup.EndNS*10; r.EndNS != want {
		t.Errorf("end_ns %d, want %d: the records in model time (time scale 10)", r.EndNS, want)
	}
}
