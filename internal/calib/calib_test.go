package calib

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/stats"
)

// chunked builds a request sent at sent whose chunks, one token each,
// arrive at the times given.
func chunked(conc, prompt int, sent float64, at ...float64) request {
	r := request{concurrency: conc, sent: sent, first: at[0], end: at[len(at)-1], prompt: prompt, output: len(at), at: at}
	for range at {
		r.tokens = append(r.tokens, 1)
	}
	return r
}

// TestObserveStepState: A decodes alone, then B (prompt 50) is prefilled in
// the step ending at 30 and both decode in the next.
func TestObserveStepState(t *testing.T) {
	reqs := []request{chunked(2, 100, 0, 10, 20, 30, 40), chunked(2, 50, 15, 30, 40)}
	got := observe(reqs)
	want := []gap{
		{req: 0, ms: 10, seqs: 1, tokens: 1, kv: 101},           // A alone, 1 token after its prompt
		{req: 0, ms: 10, seqs: 2, tokens: 1 + 50, kv: 102 + 50}, // B's prefill shares the step
		{req: 0, ms: 10, seqs: 2, tokens: 2, kv: 103 + 51},      // both decode
		{req: 1, ms: 10, seqs: 2, tokens: 2, kv: 103 + 51},      // the same step from B
	}
	if len(got) != len(want) {
		t.Fatalf("%d gaps, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g := got[i]
		if g.req != want[i].req || g.ms != want[i].ms || g.seqs != want[i].seqs || g.tokens != want[i].tokens || g.kv != want[i].kv {
			t.Errorf("gap %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// The step that prefilled B: A decoding after 101 cached tokens, B's 50-token prompt.
	if ps := got[1].parts; len(ps) != 2 || ps[0] != (part{cached: 101, q: 1, decode: true}) || ps[1] != (part{q: 50}) {
		t.Errorf("gap 1 parts %+v", ps)
	}
	if p := peakGenerating(reqs); p != 2 {
		t.Errorf("peak generating %d, want 2", p)
	}
}

// TestFitRecoversModel: gaps and lone TTFTs made by a known model, without
// noise, give back its step times and overhead.
func TestFitRecoversModel(t *testing.T) {
	truth := Model{StepMS: 2, PerTokenMS: 0.05, MinTokens: 150, PerSeqMS: 0.3, PerKVTokenMS: 0.001, RequestOverheadMS: 5}
	var reqs []request
	var gaps []gap
	for i := range 40 {
		seqs := float64(1 + i%8)
		p := float64([]int{100, 300}[i%2])
		r := request{prompt: int(p), sent: 0}
		r.first = truth.RequestOverheadMS + truth.StepMSFor(1, p, 0)
		reqs = append(reqs, r)
		for _, tokens := range []float64{seqs, seqs + 256, seqs + 768} {
			kv := seqs * (200 + float64(i))
			gaps = append(gaps, gap{req: i, ms: truth.StepMSFor(seqs, tokens, kv), seqs: seqs, tokens: tokens, kv: kv})
		}
	}
	lone := make([]int, len(reqs))
	w := make([]float64, len(reqs))
	for i := range lone {
		lone[i], w[i] = i, 1
	}
	fl := floors(gaps)
	got, err := fitWeighted(perRequest(reqs, gaps, fl), fl, reqs, lone, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ seqs, tokens, kv float64 }{{1, 1, 0}, {8, 8, 4000}, {4, 260, 900}, {1, 512, 0}, {16, 16, 8000}} {
		g, want := got.StepMSFor(c.seqs, c.tokens, c.kv), truth.StepMSFor(c.seqs, c.tokens, c.kv)
		if math.Abs(g/want-1) > 0.03 {
			t.Errorf("step %+v: fitted %.3f ms, true %.3f ms", c, g, want)
		}
	}
	// The floor is profiled on a grid: the overhead absorbs what is left.
	if math.Abs(got.RequestOverheadMS-truth.RequestOverheadMS) > 1 {
		t.Errorf("overhead %.2f ms, true %.2f ms", got.RequestOverheadMS, truth.RequestOverheadMS)
	}
}

// TestSlots: the slot count as given, as the server states it, as the run
// shows it when fewer generated at once than were in flight, or unbounded.
func TestSlots(t *testing.T) {
	// Four users, two generating at a time: the second pair starts when the first ends.
	slotBound := []request{chunked(4, 10, 0, 10, 20), chunked(4, 10, 0, 10, 20), chunked(4, 10, 0, 30, 40), chunked(4, 10, 0, 30, 40)}
	free := []request{chunked(2, 10, 0, 10, 20), chunked(2, 10, 0, 10, 20)}
	for _, c := range []struct {
		name   string
		reqs   []request
		server map[record.ServerKey]string
		given  int
		want   int
		source string
	}{
		{"given", slotBound, map[record.ServerKey]string{"total_slots": "8"}, 3, 3, SlotsFlag},
		{"llama.cpp props", free, map[record.ServerKey]string{"total_slots": "8"}, 0, 8, SlotsServer},
		{"simulator", free, map[record.ServerKey]string{"max_num_seqs": "6"}, 0, 6, SlotsServer},
		{"from the run", slotBound, nil, 0, 2, SlotsRun},
		{"never filled", free, map[record.ServerKey]string{"max_num_seqs": "many"}, 0, 0, SlotsUnbounded},
	} {
		n, src := slots(c.reqs, c.server, c.given)
		if n != c.want || src != c.source {
			t.Errorf("%s: %d from %q, want %d from %q", c.name, n, src, c.want, c.source)
		}
	}
}

// TestOverheadIn: a server that says it is Ollama spends a request's
// overhead holding a slot, and the simulator a fit configures does too;
// any other server, or none, spends it before the queue.
func TestOverheadIn(t *testing.T) {
	for _, c := range []struct {
		server map[record.ServerKey]string
		want   string
	}{
		{map[record.ServerKey]string{"runtime": "ollama", "runtime_version": "0.17.4"}, sim.OverheadInSlot},
		{map[record.ServerKey]string{"runtime": "vllm"}, sim.OverheadInQueue},
		{map[record.ServerKey]string{"max_num_seqs": "12"}, sim.OverheadInQueue}, // servebench's own simulator
		{nil, sim.OverheadInQueue},
	} {
		f := &Fit{OverheadIn: overheadIn(c.server)}
		if f.OverheadIn != c.want {
			t.Errorf("server %v: overhead in %q, want %q", c.server, f.OverheadIn, c.want)
		}
		if got := f.SimConfig().Engine.OverheadIn; got != c.want {
			t.Errorf("server %v: simulator's overhead in %q, want %q", c.server, got, c.want)
		}
	}
}

// TestPredictMatchesSimulator: a prediction is the simulator's closed loop
// summarised: one user, 10 ms steps below the floor, 20 ms overhead.
func TestPredictMatchesSimulator(t *testing.T) {
	f := &Fit{Model: Model{StepMS: 10, PerTokenMS: 0.01, MinTokens: 100, RequestOverheadMS: 20}}
	got, err := Predict(f.SimConfig(), []Point{{Concurrency: 1, PromptTokens: 50, OutputTokens: 11, Requests: 3}})
	if err != nil {
		t.Fatal(err)
	}
	// TTFT 20 + 11 ms; 10 decode steps of 11 ms: 1000/11 tok/s; 11 tokens per 141 ms.
	p := got[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ttft", p.TTFTP50MS, 31}, {"decode", p.DecodeTPS, 1000.0 / 11}, {"output", p.OutputTPS, 3 * 11 / 0.423},
	} {
		if math.Abs(c.got/c.want-1) > 1e-6 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// A fit without noise: every replica runs alike.
	if p.Spread == nil || p.Spread.TTFT > 1e-12 || p.Spread.DecodeTPS > 1e-12 || p.Spread.OutputTPS > 1e-12 {
		t.Errorf("spread %+v, want zeros for a run without noise", p.Spread)
	}
}

// TestPredictionSpread: the spread of a prediction is how much its
// replicas, each a run of the point's requests, differ: none without
// noise, and one that grows with the server's wander.
func TestPredictionSpread(t *testing.T) {
	f := &Fit{Model: Model{StepMS: 10, PerTokenMS: 0.01, MinTokens: 100, RequestOverheadMS: 20}}
	pt := []Point{{Concurrency: 4, PromptTokens: 50, OutputTokens: 32, Requests: 24}}
	spread := func(w *Wander) plan.Ratios {
		t.Helper()
		f.Wander = w
		got, err := Predict(f.SimConfig(), pt)
		if err != nil || got[0].Spread == nil {
			t.Fatalf("predict: %v, %+v", err, got)
		}
		return *got[0].Spread
	}
	calm, wild := spread(&Wander{SD: 0.05, TimeS: 0.5}), spread(&Wander{SD: 0.3, TimeS: 0.5})
	for _, c := range []struct {
		name       string
		calm, wild float64
	}{{"TTFT", calm.TTFT, wild.TTFT}, {"decode", calm.DecodeTPS, wild.DecodeTPS}, {"output", calm.OutputTPS, wild.OutputTPS}} {
		if !(c.calm > 0 && c.wild > 2*c.calm && c.wild < 0.5) {
			t.Errorf("%s spread %.4f with a 5%% wander, %.4f with 30%%: want it to grow with the wander", c.name, c.calm, c.wild)
		}
	}
}

// A bootstrap interval always contains its estimate: one that lies
// beside its resamples is widened to reach them and marked unstable, and
// the fit's warnings name it.
func TestParamIntervalContainsEstimate(t *testing.T) {
	for _, c := range []struct {
		name         string
		value        float64
		draws        []float64
		low, high    float64
		wantUnstable bool
	}{
		{"inside", 5, []float64{6, 4, 5, 5, 5, 4.5, 5.5}, 4, 6, false},
		{"below its resamples", 1, []float64{4, 5, 6, 5, 5}, 1, 6, true},
		{"above its resamples", 9, []float64{4, 5, 6, 5, 5}, 4, 9, true},
		{"no resamples", 3, nil, 3, 3, false},
	} {
		p := Param{Name: c.name, Value: c.value, Low: c.value, High: c.value}
		p.interval(c.draws)
		if math.Abs(p.Low-c.low) > 0.15 || math.Abs(p.High-c.high) > 0.15 || p.Unstable != c.wantUnstable {
			t.Errorf("%s: [%v, %v] unstable %v, want [%v, %v] unstable %v", c.name, p.Low, p.High, p.Unstable, c.low, c.high, c.wantUnstable)
		}
	}
	f := &Fit{Params: []Param{{Name: "step_ms"}, {Name: "min_tokens", Unstable: true}}, LoneRequests: 1, SlotsSource: "server"}
	if w := strings.Join(warnings(f, []request{{prompt: 1}, {prompt: 2}}), "\n"); !strings.Contains(w, "min_tokens: the estimate lay outside") || strings.Contains(w, "step_ms") {
		t.Errorf("warnings %q: want min_tokens named as unstable, step_ms not", w)
	}
}

// TestSummarizeSpread: a prediction's spread is its replicas' own
// figures, each replica summarised alone, sample sd over mean.
func TestSummarizeSpread(t *testing.T) {
	f := &Fit{Model: Model{StepMS: 10, PerTokenMS: 0.01, MinTokens: 100, RequestOverheadMS: 20}, Wander: &Wander{SD: 0.2, TimeS: 0.3}}
	cfg := f.SimConfig()
	p := Point{Concurrency: 3, PromptTokens: 40, OutputTokens: 20, Requests: 12}
	reqs := p.requests()
	var runs [][]sim.Outcome
	var ttft, decode, output []float64
	for seed := range int64(5) {
		c := cfg
		c.Seed = seed + 1
		outs, _, err := sim.SimulateClosed(c, p.Concurrency, reqs)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, outs)
		one := summarize(p, [][]sim.Outcome{outs})
		ttft, decode, output = append(ttft, one.TTFTP50MS), append(decode, one.DecodeTPS), append(output, one.OutputTPS)
	}
	got := summarize(p, runs).Spread
	for _, c := range []struct {
		name string
		got  float64
		xs   []float64
	}{{"TTFT", got.TTFT, ttft}, {"decode", got.DecodeTPS, decode}, {"output", got.OutputTPS, output}} {
		if want := stats.StdDev(c.xs) / stats.Mean(c.xs); !(want > 0) || math.Abs(c.got-want) > 1e-12 {
			t.Errorf("%s spread %v, want %v (replicas %v)", c.name, c.got, want, c.xs)
		}
	}
}

// TestPredictionRecords: a simulated request becomes the record a run
// would have written, so metrics reads from it the TTFT, E2E, tokens and
// phase the simulator gave it; a failed one is a failed record.
func TestPredictionRecords(t *testing.T) {
	p := Point{Concurrency: 2, PromptTokens: 40, OutputTokens: 5, Requests: 3, Warmup: 1}
	ok := sim.Outcome{Request: sim.Request{Arrival: 3 * time.Millisecond, PromptTokens: 40, OutputTokens: 5},
		TTFT: 20 * time.Millisecond, E2E: 60 * time.Millisecond, Tokens: 5}
	failed := ok
	failed.Tokens, failed.TTFT, failed.Err = 0, 0, sim.ErrKVCacheFull
	for _, c := range []struct {
		name      string
		i         int
		o         sim.Outcome
		phase     string
		ttft, tps float64 // ms; tokens/s after the first
		err       bool
	}{
		{"warm-up", 0, ok, record.PhaseWarmup, 20, 4 / 0.040, false},
		{"measured", 1, ok, record.PhaseMeasured, 20, 4 / 0.040, false},
		{"failed", 2, failed, record.PhaseMeasured, 0, 0, true},
	} {
		r := p.record(c.i, c.o)
		ttft, _ := metrics.TTFT(r)
		tps, _ := metrics.DecodeSpeed(r)
		if r.Phase != c.phase || math.Abs(ttft-c.ttft) > 1e-9 || math.Abs(tps-c.tps) > 1e-9 || (r.Error != nil) != c.err ||
			metrics.E2E(r) != 60 || r.SentNS != int64(3*time.Millisecond) || r.Load.Concurrency != 2 {
			t.Errorf("%s: record %+v: ttft %v decode %v, want %v and %v", c.name, r, ttft, tps, c.ttft, c.tps)
		}
	}
}
