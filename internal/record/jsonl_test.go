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

// TestLoadText: a load in both forms, and as a label, which adds its
// workload cell to the short form.
func TestLoadText(t *testing.T) {
	for _, tt := range []struct {
		l                  Load
		short, long, label string
	}{
		{Load{Concurrency: 4}, "c=4", "concurrency 4", "c=4"},
		{Load{Rate: 2.5}, "r=2.5/s", "2.5 req/s", "r=2.5/s"},
		{Load{Rate: 2, MaxConcurrency: 8}, "r=2/s ≤8", "2 req/s (at most 8 in flight)", "r=2/s ≤8"},
		{Load{Workload: "in=128 out=64", Concurrency: 1}, "c=1", "concurrency 1", "in=128 out=64 c=1"},
	} {
		if got := tt.l.Text(LoadShort); got != tt.short {
			t.Errorf("%+v short: got %q, want %q", tt.l, got, tt.short)
		}
		if got := tt.l.Text(LoadLong); got != tt.long {
			t.Errorf("%+v long: got %q, want %q", tt.l, got, tt.long)
		}
		if got := tt.l.Label(); got != tt.label {
			t.Errorf("%+v label: got %q, want %q", tt.l, got, tt.label)
		}
	}
}

// TestReaderSkipsDamagedLines: after SkipDamaged every good line is read
// and each bad one is listed with its line number, a truncated last line
// (what a killed run leaves) included.
func TestReaderSkipsDamagedLines(t *testing.T) {
	good := func(id int) string {
		return fmt.Sprintf(`{"schema":"servebench.record/v1","id":%d,"phase":"measured","sent_ns":1,"end_ns":2}`, id)
	}
	tests := []struct {
		name    string
		in      string
		good    int
		damaged []int
	}{
		{"truncated last line", good(0) + "\n" + good(1) + "\n" + good(2)[:30], 2, []int{3}},
		{"bad lines between good", good(0) + "\n{oops\n" + good(1) + "\n\n" + `{"phase":"x"}` + "\n" + good(2) + "\n", 3, []int{2, 5}},
		{"all good", good(0) + "\n" + good(1) + "\n", 2, nil},
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
		{Server: &ServerTiming{EvalCount: 7, EvalDuration: 9, CachedTokens: ptr(2)}, FinishReason: "stop"},
		{Server: &ServerTiming{CachedTokens: ptr(0)}},
	}
	for range 200 {
		r := &Record{ID: rng.Int64(), SentNS: rng.Int64N(1e12), EndNS: rng.Int64N(1e12), Load: Load{Concurrency: rng.IntN(9)}}
		if rng.IntN(2) == 0 {
			r.Load = Load{Rate: rng.Float64() * 100, MaxConcurrency: rng.IntN(3), Workload: WorkloadLabel("lognormal:8192,2048", "<128>")}
		}
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
		checkEncode(t, fmt.Sprint("record ", i), r)
	}
}

// checkEncode holds encode's line for r to encoding/json's Encoder's.
func checkEncode(t *testing.T, name string, r *Record) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	werr := enc.Encode(r)
	got, err := encode(nil, r)
	if (err != nil) != (werr != nil) || err == nil && string(got) != want.String() {
		t.Fatalf("%s:\n got %s (%v)\nwant %s (%v)", name, got, err, want.String(), werr)
	}
}

// TestEncodeEveryField sets every field of a record, and of the structs
// it holds, to a value that is not zero: a field added to one of them
// and not to encode fails here.
func TestEncodeEveryField(t *testing.T) {
	r := new(Record)
	fill(reflect.ValueOf(r).Elem())
	if r.Server == nil || r.Error == nil || len(r.Chunks) == 0 || r.Load.Rate == 0 || r.Error.RetryAfter == "" {
		t.Fatalf("fill left fields zero: %+v", r)
	}
	checkEncode(t, "every field set", r)
	// And each field alone, the others zero: omitempty and the commas.
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		one := new(Record)
		reflect.ValueOf(one).Elem().Field(i).Set(v.Field(i))
		checkEncode(t, "only "+v.Type().Field(i).Name, one)
	}
	for _, one := range []*Record{{Server: &ServerTiming{CachedTokens: ptr(1)}}, {Server: &ServerTiming{CachedTokens: ptr(0)}}, {Server: &ServerTiming{}}, {Load: Load{MaxConcurrency: 2}}} {
		checkEncode(t, fmt.Sprintf("%+v", one), one)
	}
}

// fill sets every field of v, recursively, to a value that is not zero.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0))
		fill(v.Index(1))
	case reflect.String:
		v.SetString("x <&> \u2028 \"" + v.Type().Name())
	case reflect.Int, reflect.Int64:
		v.SetInt(-7)
	case reflect.Float64:
		v.SetFloat(2.5e-7)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fill: a field of kind " + v.Kind().String())
	}
}

// FuzzEncode: any texts and numbers in a record's fields encode as
// encoding/json encodes them.
func FuzzEncode(f *testing.F) {
	f.Add("openai-chat", "m", "stop", "in=1 out=2", 4, 0.5, int64(12), int64(-3), "http_5xx", "a \"b\" <c>")
	f.Add("", "\xff", "\u2028", "", 0, 1e-9, int64(0), int64(1<<62), "", "")
	f.Fuzz(func(t *testing.T, api, model, finish, workload string, c int, rate float64, sent, chunkAt int64, class, msg string) {
		r := &Record{Schema: Schema, API: api, Model: model, FinishReason: finish, Load: Load{Workload: workload, Concurrency: c, Rate: rate},
			SentNS: sent, Chunks: []Chunk{{AtNS: chunkAt, Tokens: c}}, Session: c, Turn: -c}
		if class != "" || msg != "" {
			r.Error = &Error{Class: class, Message: msg, Status: c, RetryAfter: msg}
		}
		if c%2 == 0 {
			r.Server = &ServerTiming{TotalDuration: sent, CachedTokens: ptr(c)}
		}
		checkEncode(t, "fuzzed", r)
	})
}

// BenchmarkEncode: a 20-chunk record, by hand and, for the ratio in one
// run, by encoding/json's Encoder.
func BenchmarkEncode(b *testing.B) {
	r := sample(7)
	for i := range 20 {
		r.Chunks = append(r.Chunks, Chunk{AtNS: int64(i) * 1_234_567, Tokens: 1})
	}
	var line []byte
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			var err error
			if line, err = encode(line[:0], r); err != nil {
				b.Fatal(err)
			}
		}
	})
	var buf bytes.Buffer
	b.Run("encoding-json", func(b *testing.B) {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReaderFirstTokenWithinRequest: a first token before the send or
// after the end cannot be from a real run, and every metric read from it
// (TTFT longer than the request, a negative decode time) would be wrong;
// a first token at the end (a one-chunk answer) is fine.
func TestReaderFirstTokenWithinRequest(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"after the end", `{"phase":"measured","sent_ns":1,"first_token_ns":9,"end_ns":5}`, false},
		{"before the send", `{"phase":"measured","sent_ns":3,"first_token_ns":2,"end_ns":5}`, false},
		{"at the end", `{"phase":"measured","sent_ns":1,"first_token_ns":5,"end_ns":5}`, true},
		{"none", `{"phase":"measured","sent_ns":1,"end_ns":5}`, true},
	}
	for _, tt := range tests {
		rd := NewReader(strings.NewReader(tt.in))
		for rd.Next() {
		}
		err := rd.Err()
		if tt.ok && err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), "line 1: record 0: instants out of order")) {
			t.Errorf("%s: got %v, want the line's instants out of order", tt.name, err)
		}
	}
}

func ptr(n int) *int { return &n }

// TestCachedReported: a server that said 0 tokens were cached is told
// apart from one that said nothing, on the way out and back in; a line
// without the member (a server that does not report, or an old record)
// reads as not reported.
func TestCachedReported(t *testing.T) {
	tests := []struct {
		name     string
		server   *ServerTiming
		wantLine string // what the server object is written as
		want     int
		reported bool
	}{
		// No server object at all.
		{"no server", nil, "", 0, false},
		// A server object without a cached count (Ollama).
		{"not reported", &ServerTiming{EvalCount: 3}, `"server":{"eval_count":3}`, 0, false},
		// The server said none were cached.
		{"reported zero", &ServerTiming{CachedTokens: ptr(0)}, `"server":{"cached_tokens":0}`, 0, true},
		// The server said 16 were cached.
		{"reported", &ServerTiming{CachedTokens: ptr(16)}, `"server":{"cached_tokens":16}`, 16, true},
	}
	for _, tt := range tests {
		line, err := encode(nil, &Record{Schema: Schema, Phase: PhaseMeasured, Server: tt.server})
		if err != nil {
			t.Fatal(err)
		}
		if tt.wantLine != "" && !bytes.Contains(line, []byte(tt.wantLine)) {
			t.Errorf("%s: line %s lacks %s", tt.name, line, tt.wantLine)
		}
		var back Record
		if err := decode(bytes.TrimSpace(line), &back); err != nil {
			t.Fatal(err)
		}
		if got, ok := back.Cached(); got != tt.want || ok != tt.reported {
			t.Errorf("%s: Cached() = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.reported)
		}
	}
}
