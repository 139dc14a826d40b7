package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func sample(id int64) *Record {
	return &Record{
		Schema: Schema, Point: 1, Load: Load{Concurrency: 4}, ID: id, Phase: PhaseMeasured,
		API: "openai-chat", Model: "m", PromptTokensRequested: 10, OutputTokensRequested: 3,
		PromptTokens: 10, PromptTokensSource: SourceUsage, OutputTokens: 3, OutputTokensSource: SourceUsage,
		ScheduledNS: 100, SentNS: 150, FirstTokenNS: 1150, FirstOutputNS: 1150, EndNS: 3150,
		Chunks: []Chunk{{AtNS: 1000, Tokens: 1}, {AtNS: 2000, Tokens: 1}, {AtNS: 3000, Tokens: 1}},
		Server: &ServerTiming{EvalCount: 3}, FinishReason: "length",
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	in := []*Record{sample(1), sample(2)}
	in[1].Error = &Error{Class: ClassRateLimited, Status: 429, RetryAfter: "3", Message: "slow down"}
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(buf.String(), "\n"); got != 2 {
		t.Fatalf("got %d lines, want 2", got)
	}
	rd := NewReader(strings.NewReader("\n" + buf.String() + "\n"))
	var out []*Record
	for rd.Next() {
		r := *rd.Record()
		out = append(out, &r)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed records:\n%+v\n%+v", in[1], out[1])
	}
}

func TestReaderErrorsNameTheLine(t *testing.T) {
	good := `{"schema":"servebench.record/v1","phase":"measured","sent_ns":1,"end_ns":2}`
	tests := []struct {
		name, in, want string
	}{
		{"not json", good + "\n{oops\n", "line 2: not a record"},
		{"bad phase", `{"phase":"x","end_ns":1}`, "line 1: record 0: phase"},
		{"end before send", `{"phase":"measured","sent_ns":5,"end_ns":1}`, "instants out of order"},
		{"unknown schema", `{"schema":"other/v9","phase":"measured"}`, "unknown record schema"},
		{"chunks backwards", `{"phase":"measured","end_ns":9,"chunks":[{"t":5,"n":1},{"t":4,"n":1}]}`, "chunk 1"},
	}
	for _, tt := range tests {
		rd := NewReader(strings.NewReader(tt.in))
		for rd.Next() {
		}
		if err := rd.Err(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n > 1 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterStickyError(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw)
	if err := w.Write(sample(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(sample(2)); err == nil {
		t.Fatal("want error")
	}
	if err := w.Write(sample(3)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("want sticky error, got %v", err)
	}
	// After the failure nothing more reaches the file.
	if fw.n != 2 {
		t.Errorf("%d writes reached the file, want 2 (one good, one failed)", fw.n)
	}
}

func TestWriterConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { _ = w.Write(sample(int64(i))) })
	}
	wg.Wait()
	rd := NewReader(&buf)
	n := 0
	for rd.Next() {
		n++
	}
	if rd.Err() != nil || n != 50 {
		t.Fatalf("read %d records, err %v", n, rd.Err())
	}
}

func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	_ = NewWriter(&buf).Write(sample(1))
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n\n{\"phase\":\"warmup\"}"))
	f.Add([]byte(`{"phase":"measured","chunks":[{"t":-1,"n":-5}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd := NewReader(bytes.NewReader(b))
		for rd.Next() {
			r := rd.Record()
			if r.EndNS < r.SentNS {
				t.Fatalf("reader accepted a record ending before it was sent")
			}
		}
	})
}

func TestLoadLabel(t *testing.T) {
	for _, tt := range []struct {
		l    Load
		want string
	}{
		{Load{Concurrency: 4}, "c=4"},
		{Load{Rate: 2.5}, "r=2.5/s"},
		{Load{Rate: 2, MaxConcurrency: 8}, "r=2/s ≤8"},
	} {
		if got := tt.l.Label(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.l, got, tt.want)
		}
	}
}

// TestReaderSkipsDamagedLines: after SkipDamaged every good line is read
// and each bad one is listed with its line number, a truncated last line
// (what a killed run leaves) included.
func TestReaderSkipsDamagedLines(t *testing.T) {
	good := `{"schema":"servebench.record/v1","phase":"measured","sent_ns":1,"end_ns":2}`
	tests := []struct {
		name    string
		in      string
		good    int
		damaged []int
	}{
		{"truncated last line", good + "\n" + good + "\n" + good[:30], 2, []int{3}},
		{"bad lines between good", good + "\n{oops\n" + good + "\n\n" + `{"phase":"x"}` + "\n" + good + "\n", 3, []int{2, 5}},
		{"all good", good + "\n" + good + "\n", 2, nil},
		{"nothing good", "{\n}\n", 0, []int{1, 2}},
	}
	for _, tt := range tests {
		rd := NewReader(strings.NewReader(tt.in))
		rd.SkipDamaged()
		n := 0
		for rd.Next() {
			n++
		}
		if err := rd.Err(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		var lines []int
		for _, d := range rd.Damaged() {
			lines = append(lines, d.Line)
			if !strings.HasPrefix(d.Error(), fmt.Sprintf("line %d: ", d.Line)) {
				t.Errorf("%s: error %q does not name its line", tt.name, d)
			}
		}
		if n != tt.good || !reflect.DeepEqual(lines, tt.damaged) {
			t.Errorf("%s: %d good, damaged lines %v; want %d, %v", tt.name, n, lines, tt.good, tt.damaged)
		}
	}
}

// The hand-written chunks leave a record's line exactly as encoding/json
// writes it, whatever the record holds.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := []*Record{
		{},
		{Schema: Schema, Phase: PhaseMeasured, API: "openai-chat", Model: "m <&> \u2028", EndNS: 5},
		{Chunks: []Chunk{{AtNS: -1, Tokens: 0}}},
		{Chunks: []Chunk{{AtNS: 12, Tokens: 1}, {AtNS: 1 << 62, Tokens: 3, Reasoning: true}}, Error: &Error{Class: ClassOOM, Message: "a \"quoted\" <b>", Status: 503}},
		{Server: &ServerTiming{}, Error: &Error{}},
		{Server: &ServerTiming{EvalCount: 7, EvalDuration: 9, CachedTokens: 2}, FinishReason: "stop"},
	}
	for range 200 {
		r := &Record{ID: rng.Int64(), SentNS: rng.Int64N(1e12), EndNS: rng.Int64N(1e12), Load: Load{Concurrency: rng.IntN(9)}}
		for range rng.IntN(40) {
			r.Chunks = append(r.Chunks, Chunk{AtNS: rng.Int64() - rng.Int64(), Tokens: rng.IntN(5), Reasoning: rng.IntN(3) == 0})
		}
		if rng.IntN(2) == 0 {
			r.Server = &ServerTiming{PromptEvalCount: rng.IntN(100)}
		}
		if rng.IntN(3) == 0 {
			r.Error = &Error{Class: ClassTimeoutMid, Message: "m"}
		}
		recs = append(recs, r)
	}
	for i, r := range recs {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := encode(&got, r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got.String(), want.String())
		}
	}
}
