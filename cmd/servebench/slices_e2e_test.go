package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sustainSummary is the part of summary.json the slice tests read.
type sustainSummary struct {
	Points []struct {
		Slices []struct {
			Index        int      `json:"index"`
			StartS       float64  `json:"start_s"`
			EndS         float64  `json:"end_s"`
			Phase        string   `json:"phase"`
			Completed    int      `json:"completed"`
			Errors       int      `json:"errors"`
			OutputTokens int      `json:"output_tokens"`
			OutputTPS    float64  `json:"output_tps"`
			TTFTP95      *float64 `json:"ttft_ms_p95"`
		} `json:"slices"`
		Drift *struct {
			Slices       int    `json:"slices"`
			WarmupSlices int    `json:"warmup_slices"`
			Judged       bool   `json:"judged"`
			Text         string `json:"text"`
			OutputTPS    *struct {
				N           int        `json:"n"`
				CI          [2]float64 `json:"slope_per_h_ci95"`
				SlopePerH   float64    `json:"slope_per_h"`
				Significant bool       `json:"significant"`
			} `json:"output_tps"`
		} `json:"drift"`
	} `json:"points"`
}

// sustainRecord is the part of a record slicing reads.
type sustainRecord struct {
	Phase  string `json:"phase"`
	SentNS int64  `json:"sent_ns"`
	EndNS  int64  `json:"end_ns"`
	Chunks []struct {
		T int64 `json:"t"`
		N int   `json:"n"`
	} `json:"chunks"`
	Error *struct{ Class string } `json:"error"`
}

// sustainSlicesFromRecords recomputes, from records.jsonl in model time
// (each instant times the scale, as servebench converts them), how many
// requests ended and how many tokens arrived in each slice of width ns.
func sustainSlicesFromRecords(t *testing.T, dir string, scale float64, width int64) (ok, failed, tokens []int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(ns int64) int64 { return int64(float64(ns) * scale) }
	var recs []sustainRecord
	var w0, w1 int64 = -1, 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r sustainRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Phase != "measured" || (r.Error != nil && r.Error.Class == "cancelled") {
			continue
		}
		recs = append(recs, r)
		if w0 < 0 || at(r.SentNS) < w0 {
			w0 = at(r.SentNS)
		}
		w1 = max(w1, at(r.EndNS))
	}
	n := int((w1 - w0 + width - 1) / width)
	ok, failed, tokens = make([]int, n), make([]int, n), make([]int, n)
	slice := func(ns int64) int { return min(n-1, int((ns-w0)/width)) }
	for _, r := range recs {
		if r.Error != nil {
			failed[slice(at(r.EndNS))]++
			continue
		}
		ok[slice(at(r.EndNS))]++
		for _, c := range r.Chunks {
			tokens[slice(at(r.SentNS)+at(c.T))] += c.N
		}
	}
	return ok, failed, tokens
}

// TestSustainSlicesAgreeWithRecords runs the simulator for 6 s of model
// time in 1 s slices (0.6 s of wall time at its 10× speed-up): every
// slice's completions and tokens are what the records say, in model time;
// the closed loop's first round is warm-up, the tail is the drain, and
// the drift is judged over the steady slices. report shows the same and
// slices a recorded run again with --slice.
func TestSustainSlicesAgreeWithRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := run(t, "run", "--concurrency", "2", "--duration", "6s", "--slice", "1s",
		"--prompt-tokens", "64", "--output-tokens", "32", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var s sustainSummary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || len(s.Points) != 1 {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}
	p := s.Points[0]
	ok, failed, tokens := sustainSlicesFromRecords(t, dir, 10, 1e9)
	if len(p.Slices) != len(ok) || len(ok) < 6 {
		t.Fatalf("%d slices, the records' window holds %d of 1 s", len(p.Slices), len(ok))
	}
	for i, sl := range p.Slices {
		if sl.Completed != ok[i] || sl.Errors != failed[i] || sl.OutputTokens != tokens[i] {
			t.Errorf("slice %d: %d ok, %d errors, %d tokens; the records say %d, %d, %d", i, sl.Completed, sl.Errors, sl.OutputTokens, ok[i], failed[i], tokens[i])
		}
		if i < 6 && (sl.StartS != float64(i) || sl.EndS != float64(i+1) || !approxEqual(sl.OutputTPS, float64(sl.OutputTokens))) {
			t.Errorf("slice %d: %v–%v s at %v tok/s, want a full second of model time", i, sl.StartS, sl.EndS, sl.OutputTPS)
		}
	}
	last := p.Slices[len(p.Slices)-1]
	if p.Slices[0].Phase != "warmup" || p.Slices[1].Phase != "steady" || last.Phase != "drain" {
		t.Errorf("phases: first %s, second %s, last %s; want warmup, steady, drain", p.Slices[0].Phase, p.Slices[1].Phase, last.Phase)
	}
	d := p.Drift
	if d == nil || !d.Judged || d.Slices < 3 || d.WarmupSlices != 1 || d.OutputTPS == nil || d.OutputTPS.N != d.Slices ||
		!(d.OutputTPS.CI[0] <= d.OutputTPS.SlopePerH && d.OutputTPS.SlopePerH <= d.OutputTPS.CI[1]) || d.Text == "" {
		t.Fatalf("drift: %+v", d)
	}
	sustainReport(t, dir, len(p.Slices))
}

func approxEqual(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// sustainReport: report shows the recorded run's slices and drift, and
// --slice cuts it again.
func sustainReport(t *testing.T, dir string, n int) {
	t.Helper()
	code, stdout, stderr := run(t, "report", dir)
	if code != 0 || !strings.Contains(stdout, "Slices of 1 s at c=2") || !strings.Contains(stdout, "  drift: over ") {
		t.Errorf("report: exit %d, no slices or drift line\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "report", "--slice", "2s", "--json", dir)
	var s sustainSummary
	if err := json.Unmarshal([]byte(stdout), &s); code != 0 || err != nil {
		t.Fatalf("report --slice 2s: exit %d %v\n%s", code, err, stderr)
	}
	if got, want := len(s.Points[0].Slices), (n+1)/2; got != want && got != want+1 {
		t.Errorf("report --slice 2s: %d slices, want about %d (half of %d)", got, want, n)
	}
}

// TestSustainSliceFlag: --slice must be positive and fit in --duration; a
// bad value is a usage error naming the flag, and nothing runs.
func TestSustainSliceFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--slice", "0s"}, "--slice wants a positive duration"},
		{[]string{"--slice", "-1m"}, "--slice wants a positive duration"},
		{[]string{"--duration", "2s", "--slice", "5s"}, "--slice 5s is longer than --duration 2s"},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, append([]string{"run"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// The run in testdata/sustained is a short sliced run against the
// built-in simulator, checked in so that its report is fixed: two users
// for 4 s of model time in 1 s slices, 64-token prompts and 32-token
// answers. It was made with
//
//	servebench run --concurrency 2 --duration 4s --slice 1s \
//	    --prompt-tokens 64 --output-tokens 32 --out testdata/sustained
//
// TestSustainReportGolden renders it in every format and compares with
// testdata/report/sustained-*.golden (-update rewrites them).
func TestSustainReportGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "csv", "markdown"} {
		args := []string{"report", "--format", format, filepath.Join("testdata", "sustained")}
		t.Run(format, func(t *testing.T) { reportGolden(t, "sustained-"+format, args...) })
	}
}

// sustainSlowingServer streams completions of tokens one-token chunks
// whose gap grows with the time since its first request, as a GPU slowing
// under throttling would: base at first, base·(1 + t/per) after t.
type sustainSlowingServer struct {
	tokens    int
	base, per time.Duration
	once      sync.Once
	start     time.Time
}

func (s *sustainSlowingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/completions") {
		http.NotFound(w, r)
		return
	}
	s.once.Do(func() { s.start = time.Now() })
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range s.tokens {
		slow := 1 + float64(time.Since(s.start))/float64(s.per)
		select {
		case <-time.After(time.Duration(float64(s.base) * slow)):
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t%d\"}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.tokens)
	w.(http.Flusher).Flush()
}

// TestSustainDriftWarnedOnTop runs the binary for 3 s in 0.3 s slices
// against a server whose token gap grows from 4 ms to 28 ms over the run
// (a sevenfold slowdown, far beyond what a busy machine's late timers
// add): the drift is detected with a negative slope whose interval
// excludes zero, and the terminal says so between the header and the
// table.
func TestSustainDriftWarnedOnTop(t *testing.T) {
	srv := httptest.NewServer(&sustainSlowingServer{tokens: 20, base: 4 * time.Millisecond, per: 500 * time.Millisecond})
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := run(t, "run", "--url", srv.URL, "--api", "openai-completions", "--model", "m",
		"--tokenizer", "cl100k_base", "--no-preflight", "--no-telemetry", "--concurrency", "2",
		"--duration", "3s", "--slice", "300ms", "--prompt-tokens", "8", "--output-tokens", "20", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	warn, table := strings.Index(stdout, "WARNING c=2: drift: aggregate throughput fell by"), strings.Index(stdout, "speed tok/s/req")
	if warn < 0 || table < warn {
		t.Errorf("no drift warning above the table:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s sustainSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	d := s.Points[0].Drift
	if d == nil || !d.Judged || d.OutputTPS == nil || !d.OutputTPS.Significant || d.OutputTPS.CI[1] >= 0 {
		t.Errorf("drift %+v: want a significant fall of throughput\n%s", d, stdout)
	}
}

// sustainWriteGPU writes a telemetry.jsonl beside dir's records: one GPU
// read every 10 ms across the measured window, its temperature rising
// from 60 °C to 110 °C and its power falling from 500 W to 400 W, its
// clocks throttled (thermal) from the middle of the window on. It returns
// the window's span on the records' clock.
func sustainWriteGPU(t *testing.T, dir string) (w0, w1 int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w0 = -1
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r sustainRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Phase == "measured" {
			if w0 < 0 || r.SentNS < w0 {
				w0 = r.SentNS
			}
			w1 = max(w1, r.EndNS)
		}
	}
	var out strings.Builder
	for at := w0 - 10e6; at <= w1+10e6; at += 10e6 {
		frac := max(0, min(1, float64(at-w0)/float64(w1-w0)))
		throttle := "[]"
		if frac >= 0.5 {
			throttle = `["thermal"]`
		}
		fmt.Fprintf(&out, `{"t_ns":%d,"source":"gpu","instance":"nvml","gpu":{"index":0,"name":"scripted","temperature_c":%.3f,"power_w":%.3f,"throttle":%s}}`+"\n",
			at, 60+50*frac, 500-100*frac, throttle)
	}
	if err := os.WriteFile(filepath.Join(dir, "telemetry.jsonl"), []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return w0, w1
}

// TestSustainSliceTelemetryFromFile: report reads a run's telemetry.jsonl
// and gives each slice its GPU figures over the slice's own span (model
// time, at the run's 10× scale), and the drift check says what the GPU
// showed: throttled slices from the middle on, temperature rising.
func TestSustainSliceTelemetryFromFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"records.jsonl", "run.json", "summary.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sustained", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sustainWriteGPU(t, dir)
	code, stdout, stderr := run(t, "report", "--json", dir)
	var s struct {
		Points []struct {
			Slices []struct {
				Phase     string `json:"phase"`
				Telemetry *struct {
					Temp     *float64 `json:"gpu_temperature_c_max"`
					Power    *float64 `json:"gpu_power_w_mean"`
					Throttle *float64 `json:"gpu_throttle_s"`
				} `json:"telemetry"`
			} `json:"slices"`
			Drift struct {
				Coincidence *struct {
					Slices          int    `json:"slices"`
					ThrottledSlices int    `json:"throttled_slices"`
					Text            string `json:"text"`
				} `json:"coincidence"`
			} `json:"drift"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, stderr)
	}
	ss := s.Points[0].Slices
	for i := range 4 {
		if ss[i].Telemetry == nil || ss[i].Telemetry.Temp == nil || ss[i].Telemetry.Throttle == nil || ss[i].Telemetry.Power == nil {
			t.Fatalf("slice %d has no GPU telemetry: %+v", i, ss[i].Telemetry)
		}
		if i > 0 && *ss[i].Telemetry.Temp <= *ss[i-1].Telemetry.Temp {
			t.Errorf("slice %d: temperature max %v, not above slice %d's %v", i, *ss[i].Telemetry.Temp, i-1, *ss[i-1].Telemetry.Temp)
		}
	}
	// The window is about 4.1 s of model time: throttling starts near
	// 2.05 s, so slice 1 is free and slice 3 throttled throughout.
	if th1, th3 := *ss[1].Telemetry.Throttle, *ss[3].Telemetry.Throttle; th1 != 0 || th3 < 0.9 || th3 > 1.0001 {
		t.Errorf("throttle s: slice 1 %v (want 0), slice 3 %v (want its whole second)", th1, th3)
	}
	c := s.Points[0].Drift.Coincidence
	if c == nil || c.ThrottledSlices < 1 || c.ThrottledSlices >= c.Slices || !strings.Contains(c.Text, "GPU clocks throttled in") {
		t.Errorf("coincidence %+v", c)
	}
	if code, stdout, _ := run(t, "report", dir); code != 0 || !strings.Contains(stdout, "GPU °C") || !strings.Contains(stdout, "throttled s") {
		t.Errorf("report: exit %d, no GPU columns in the slice table\n%s", code, stdout)
	}
}
