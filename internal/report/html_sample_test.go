package report

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
)

// samplePage is a judged run of n requests over three loads of a closed
// loop (sampleRun: over the loads given), with telemetry, as a run writes it: the page the browser tests
// open and the benchmark renders. Latencies grow with the load, so the
// run saturates; the objective fails at the highest load.
func samplePage(t testing.TB, name string, n, tokens int) HTMLRun {
	t.Helper()
	r, _ := sampleRun(t, name, []int{1, 4, 16}, n, tokens, nil)
	return r
}

// sampleRun is samplePage with each record handed to keep (when not nil)
// and the telemetry samples returned.
func sampleRun(t testing.TB, name string, loads []int, n, tokens int, keep func(*record.Record)) (HTMLRun, []telemetry.Sample) {
	t.Helper()
	ls := make([]record.Load, len(loads))
	for i, c := range loads {
		ls[i] = record.Load{Concurrency: c}
	}
	return sampleLoads(t, name, ls, n, tokens, keep)
}

// sampleLoads is sampleRun over loads that may name workload cells and
// repeat a load (a matrix, --repeat).
func sampleLoads(t testing.TB, name string, loads []record.Load, n, tokens int, keep func(*record.Record)) (HTMLRun, []telemetry.Sample) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(name))))
	var agg metrics.Aggregator
	ev := &slo.Evaluator{}
	curves := &metrics.Curves{}
	run := htmlRun()
	at := int64(0)
	var cs []int
	for pi, l := range loads {
		c := l.Concurrency
		if !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
		slow := 1.0
		if l.Workload == "in=1024 out=64" { // a longer prompt: slower first tokens
			slow = 3
		}
		per := n / len(loads)
		span := record.Span{}
		for i := range per {
			ttft := int64((30*slow*float64(c) + 20*rng.Float64()) * 1e6)
			itl := int64((8 + float64(c)/2 + 4*rng.ExpFloat64()) * 1e6)
			sent := at + int64(i/c)*(ttft+int64(tokens)*itl)
			r := &record.Record{Schema: record.Schema, Point: pi, Load: l, ID: int64(pi*per + i), Phase: record.PhaseMeasured,
				API: "openai-chat", PromptTokens: 128, OutputTokens: tokens, ScheduledNS: sent, SentNS: sent,
				FirstTokenNS: sent + ttft}
			r.Chunks = make([]record.Chunk, tokens)
			for k := range r.Chunks {
				r.Chunks[k] = record.Chunk{AtNS: ttft + int64(k)*itl, Tokens: 1}
			}
			r.EndNS = sent + r.Chunks[tokens-1].AtNS
			if i%97 == 13 {
				r.Error, r.Chunks, r.OutputTokens = &record.Error{Class: record.ClassHTTP5xx, Message: "busy"}, nil, 0
			}
			if keep != nil {
				keep(r)
			}
			agg.Add(r)
			ev.Add(r)
			curves.Add(r)
			span.Add(r)
		}
		run.Points = append(run.Points, record.PointClient{Index: pi, Load: l, Span: span})
		at = span.EndNS + 1e9
	}
	var samples []telemetry.Sample
	for ts := int64(0); ts < at; ts += 1e9 { // servebench's default sample interval
		kv := float64(ts) / float64(at)
		samples = append(samples,
			telemetry.Sample{TNS: ts, Source: telemetry.KindServer, Server: &telemetry.Server{Engine: "vllm", KVCacheUsage: &kv}},
			telemetry.Sample{TNS: ts, Source: telemetry.KindGPU, GPU: &telemetry.GPU{Index: 0, Name: "H100", MemoryUsedBytes: fp(60 << 30),
				PowerW: fp(300 + 300*kv), TemperatureC: fp(50 + 20*kv)}})
	}
	curves.AddTelemetry(telemetry.SliceScan(samples), 1)
	s := metrics.Summarize(run, &agg)
	s.AddTelemetry(telemetry.SliceScan(samples))
	slices.Sort(cs)
	o := &slo.Objective{Name: "chat", Load: slo.Load{Concurrency: cs}}
	for _, e := range []string{"ttft p95 <= 400ms", "speed p95 >= 20 tok/s"} {
		x, err := slo.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		o.SetSLO(x)
	}
	v := slo.Judge(o, ev.Evaluate(o.Checks(), slo.Options{Seed: 1}), nil, run.Target.Server)
	return HTMLRun{Name: name, Summary: s, Objective: o, Verdict: v, Curves: curves}, samples
}
