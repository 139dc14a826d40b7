package telemetry

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestHistQuantile(t *testing.T) {
	// le 1: 10, le 2: 30, le 4: 40 (cumulative), and what lies above 4.
	h := func(count float64) *Histogram {
		return &Histogram{Count: count, Buckets: []Bucket{{1, 10}, {2, 30}, {4, 40}}}
	}
	cases := []struct {
		name  string
		h     *Histogram
		q     float64
		v, lo float64
		hi    float64
	}{
		// rank 20 is 10 into the 20 of (1, 2]: 1 + 1·10/20.
		{"p50 interpolated", h(40), 0.5, 1.5, 1, 2},
		// rank 36 is 6 into the 10 of (2, 4]: 2 + 2·6/10.
		{"p90 interpolated", h(40), 0.9, 3.2, 2, 4},
		{"p99 interpolated", h(40), 0.99, 3.92, 2, 4},
		// The first bucket's lower bound is 0: rank 5 of 10 in (0, 1].
		{"first bucket", h(40), 0.125, 0.5, 0, 1},
		// rank 49.5 of 50 lies above the last finite bound: that bound.
		{"unbounded bucket", h(50), 0.99, 4, 4, math.Inf(1)},
	}
	for _, c := range cases {
		v, lo, hi := histQuantile(c.h, c.q)
		if !near(v, c.v) || lo != c.lo || hi != c.hi {
			t.Errorf("%s: got %g in [%g, %g], want %g in [%g, %g]", c.name, v, lo, hi, c.v, c.lo, c.hi)
		}
	}
}

// srv builds a server reading for the summary tests.
func srv(running, kv, preempt, queries, hits float64, ttft *Histogram) *Server {
	return &Server{Engine: "vllm", Running: f(running), KVCacheUsage: f(kv), Preemptions: f(preempt),
		PrefixCacheQueries: f(queries), PrefixCacheHits: f(hits), TTFT: ttft}
}

func ttftHist(count, b1, b2, sum float64) *Histogram {
	return &Histogram{Count: count, Sum: sum, Buckets: []Bucket{{0.1, b1}, {0.2, b2}}}
}

func TestSummarizeServer(t *testing.T) {
	const s = int64(1e9)
	at := func(t int64, inst string, sv *Server) Sample {
		return Sample{TNS: t, Source: KindServer, Instance: inst, Server: sv}
	}
	w := Window{From: 1 * s, To: 3 * s, Scale: 2, Samples: []Sample{
		at(s/5, "a", srv(50, 0.9, 0, 0, 0, ttftHist(0, 0, 0, 0))),       // before the baseline: unused
		at(s/2, "a", srv(1, 0.1, 10, 100, 50, ttftHist(20, 10, 20, 2))), // the baseline, before From
		at(3*s/2, "a", srv(2, 0.2, 12, 200, 100, ttftHist(20, 10, 20, 2))),
		at(16*s/10, "b", &Server{Engine: "vllm", Running: f(3), KVCacheUsage: f(0.6), Preemptions: f(0)}),
		{TNS: 2 * s, Source: KindEvent, Event: &Event{Kind: EventServerRestart}},
		// a restarted: preemptions 12 → 3 count as 3 since the restart.
		at(5*s/2, "a", srv(4, 0.4, 3, 300, 100, ttftHist(64, 30, 60, 8.6))),
		at(26*s/10, "b", &Server{Engine: "vllm", Running: f(5), KVCacheUsage: f(0.8), Preemptions: f(1)}),
		at(7*s/2, "a", srv(99, 0.99, 99, 999, 999, ttftHist(999, 999, 999, 999))), // after To
	}}
	got := summarizeServer(w)
	if got == nil {
		t.Fatal("nil summary")
	}
	// Ticks 1.5 s (a: 2), 1.6 s (2+3), 2.5 s (4+3), 2.6 s (4+5).
	if want := (MeanMax{Mean: 5.75, Max: 9}); *got.Running != want {
		t.Errorf("running = %+v, want %+v", *got.Running, want)
	}
	// Fractions averaged over instances: .2, .4, .5, .6.
	if !near(got.KVCacheUsage.Mean, 0.425) || !near(got.KVCacheUsage.Max, 0.6) {
		t.Errorf("kv = %+v, want mean .425 max .6", *got.KVCacheUsage)
	}
	if got.Waiting != nil || got.QueueMS != nil {
		t.Errorf("absent series summarised: waiting %v queue %v", got.Waiting, got.QueueMS)
	}
	// a: 12−10 + 3 (after the restart); b: 1.
	if *got.Preemptions != 6 {
		t.Errorf("preemptions = %v, want 6", *got.Preemptions)
	}
	// 50 hits of 200 queries.
	if !near(*got.PrefixCacheHitRate, 0.25) {
		t.Errorf("prefix hit rate = %v, want .25", *got.PrefixCacheHitRate)
	}
	// Deltas: 44 observed, 20 ≤ 0.1 s, 40 ≤ 0.2 s, mean 0.15 s (too large to
	// cap anything); model time = 2 × run clock.
	want := &Quantiles{Count: 44, P50: 220, P90: 396, P99: 400, Bucket: map[string][]float64{
		"p50": {200, 400}, "p90": {200, 400}, "p99": {400}}}
	if q := got.TTFTMS; q == nil || q.Count != want.Count || !near(q.P50, want.P50) ||
		!near(q.P90, want.P90) || !near(q.P99, want.P99) || !reflect.DeepEqual(q.Bucket, want.Bucket) {
		t.Errorf("ttft = %+v, want %+v", q, want)
	}
}

func TestQuantilesMarkovCap(t *testing.T) {
	// 100 queue times of 1 ms on average, all in vLLM's first bucket (0,
	// 0.3 s]: interpolation alone says p50 150 ms; at most half of them
	// can exceed twice the mean, a tenth ten times it.
	h := &Histogram{Count: 100, Sum: 0.1, Buckets: []Bucket{{0.3, 100}, {0.5, 100}}}
	got := quantiles(h, 1)
	want := &Quantiles{Count: 100, P50: 2, P90: 10, P99: 100,
		Bucket: map[string][]float64{"p50": {0, 300}, "p90": {0, 300}, "p99": {0, 300}}}
	if !near(got.P50, want.P50) || !near(got.P90, want.P90) || !near(got.P99, want.P99) ||
		!reflect.DeepEqual(got.Bucket, want.Bucket) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Spread over the bucket (mean 150 ms): the cap leaves interpolation be.
	h.Sum = 15
	if got := quantiles(h, 1); !near(got.P50, 150) || !near(got.P90, 270) {
		t.Errorf("uncapped: p50 %v p90 %v, want 150 and 270", got.P50, got.P90)
	}
}

func TestSummarizeServerNilWithoutReadings(t *testing.T) {
	w := Window{From: 10, To: 20, Scale: 1, Samples: []Sample{
		{TNS: 5, Source: KindServer, Instance: "a", Server: srv(1, 0, 0, 0, 0, nil)},
		{TNS: 15, Source: KindGPU, GPU: &GPU{}},
	}}
	if got := summarizeServer(w); got != nil {
		t.Errorf("no server reading inside the window: got %+v, want nil", got)
	}
	unknown := Window{From: 0, To: 20, Scale: 1, Samples: []Sample{
		{TNS: 15, Source: KindServer, Instance: "a", Server: &Server{Engine: "unknown"}, Raw: map[string]float64{"x": 1}},
	}}
	if got := summarizeServer(unknown); got != nil {
		t.Errorf("an unknown engine's raw series: got %+v, want nil", got)
	}
}

func TestServerRestartEvent(t *testing.T) {
	page := func(prompt, ttftCount int) string {
		return "vllm:num_requests_running 1\n" +
			"vllm:prompt_tokens_total " + itoa(prompt) + "\n" +
			"# TYPE vllm:time_to_first_token_seconds histogram\n" +
			"vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} " + itoa(ttftCount) + "\n" +
			"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} " + itoa(ttftCount) + "\n" +
			"vllm:time_to_first_token_seconds_sum 1\n" +
			"vllm:time_to_first_token_seconds_count " + itoa(ttftCount) + "\n"
	}
	ps, hs := servePage(t, page(100, 10))
	src := NewServerSource(Endpoint{URL: hs.URL})
	var all []Sample
	read := func(now int64) []Sample {
		got, err := src.Read(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got...)
		return got
	}
	if got := read(1); len(got) != 1 {
		t.Fatalf("first reading: %d samples, want 1 (no event)", len(got))
	}
	ps.set(page(150, 12))
	if got := read(2); len(got) != 1 {
		t.Fatalf("counters rising: %d samples, want 1", len(got))
	}
	// The counter went back: a restart; the histogram's went back too.
	ps.set(page(40, 2))
	got := read(3)
	if len(got) != 2 || got[1].Event == nil || got[1].Event.Kind != EventServerRestart || got[1].TNS != 3 ||
		!strings.Contains(got[1].Event.Detail, "prompt_tokens_total") {
		t.Fatalf("after a restart: %+v, want the reading and a server_restart event naming the counter", got)
	}
	// Only the histogram going back is a restart too.
	ps.set(page(50, 1))
	if got := read(4); len(got) != 2 || !strings.Contains(got[1].Event.Detail, "ttft_seconds") {
		t.Fatalf("histogram count dropping: %+v, want a server_restart event", got)
	}
	// Deltas over the whole run: 50 + 40 (counted from zero) + 10 prompt
	// tokens; 2 + 2 + 1 first tokens.
	sp := summarizeServer(Window{From: 1, To: 4, Scale: 1, Samples: all})
	if sp == nil || sp.TTFTMS == nil || sp.TTFTMS.Count != 5 {
		t.Fatalf("summary %+v, want 5 first tokens", sp)
	}
	a := newServerAcc(1, 4)
	for i := range all {
		a.add(&all[i])
	}
	if prompt := a.counter(1); prompt == nil || *prompt != 100 {
		t.Errorf("prompt tokens over the run = %v, want 100", prompt)
	}
}

// TestSimClockLost: the built-in simulator's counter of skipped time
// becomes the window's model time lost (delta × scale, ms); a real engine
// without the counter has none.
func TestSimClockLost(t *testing.T) {
	const s = int64(1e9)
	at := func(t int64, lost *float64) Sample {
		return Sample{TNS: t, Source: KindServer, Instance: "sim", Server: &Server{Engine: "vllm", Running: f(1), SimClockLost: lost}}
	}
	w := Window{From: s, To: 3 * s, Scale: 10, Samples: []Sample{at(s/2, f(0.5)), at(2*s, f(0.6)), at(3*s, f(0.8))}}
	sp := summarizeServer(w)
	if sp == nil || sp.SimClockLostMS == nil || !near(*sp.SimClockLostMS, 3000) {
		t.Fatalf("lost %v, want 3000 ms of model time ((0.8 - 0.5) s × 10)", sp)
	}
	w.Samples = []Sample{at(s/2, nil), at(2*s, nil)}
	if sp := summarizeServer(w); sp == nil || sp.SimClockLostMS != nil {
		t.Errorf("a server without the counter lost %v", sp)
	}
}
