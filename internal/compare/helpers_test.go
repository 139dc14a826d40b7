package compare

import (
	"math"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

var c1 = record.Load{Concurrency: 1}

// req is a completed request of a point at load, sent at sentMS, with its
// first token ttftMS later and then n−1 more tokens itlMS apart, one per
// chunk: TTFT = ttftMS, every ITL = itlMS, speed = 1000/itlMS tok/s.
func req(point int, load record.Load, id int, sentMS, ttftMS, itlMS float64, n int) *record.Record {
	r := &record.Record{Schema: record.Schema, Point: point, Load: load, ID: int64(id), Phase: record.PhaseMeasured,
		API: "openai-chat", OutputTokens: n, OutputTokensSource: record.SourceUsage}
	r.SentNS = nsOf(sentMS)
	r.FirstTokenNS = r.SentNS + nsOf(ttftMS)
	for i := range n {
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: nsOf(ttftMS + float64(i)*itlMS), Tokens: 1})
	}
	r.EndNS = r.SentNS + r.Chunks[n-1].AtNS
	return r
}

// failed is a request that failed after waitMS.
func failed(point int, load record.Load, id int, sentMS, waitMS float64) *record.Record {
	return &record.Record{Schema: record.Schema, Point: point, Load: load, ID: int64(id), Phase: record.PhaseMeasured,
		API: "openai-chat", SentNS: nsOf(sentMS), EndNS: nsOf(sentMS + waitMS),
		Error: &record.Error{Class: record.ClassHTTP5xx, Message: "boom", Status: 500}}
}

func nsOf(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// series is n requests at point 0 of load c1, one after another, the i-th
// with TTFT ttft(i) and 8 tokens itl(i) apart.
func series(n int, ttft, itl func(i int) float64) []*record.Record {
	var out []*record.Record
	t := 0.0
	for i := range n {
		r := req(0, c1, i, t, ttft(i), itl(i), 8)
		out = append(out, r)
		t += float64(r.EndNS-r.SentNS)/1e6 + 1
	}
	return out
}

// side summarises records as compare's command does: one aggregator for
// the summary, one evaluator for the intervals, keeping what it keeps.
func side(name string, run *record.Run, recs ...*record.Record) *Side {
	ev := &slo.Evaluator{Keep: Keep}
	var agg metrics.Aggregator
	for _, r := range recs {
		agg.Add(r)
		ev.Add(r)
	}
	return &Side{Name: name, Summary: metrics.Summarize(run, &agg), Eval: ev}
}

// changeOf finds a metric's change at a point.
func changeOf(t *testing.T, p Point, metric string) Change {
	t.Helper()
	for _, c := range p.Changes {
		if c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no change of %s at %s", metric, p.Load.Label())
	return Change{}
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

func linear(base, step float64) func(int) float64 {
	return func(i int) float64 { return base + step*float64(i) }
}

// scattered is base + 0..width−1, in a fixed order that neither rises nor
// falls over a run.
func scattered(base float64, width int) func(int) float64 {
	return func(i int) float64 { return base + float64(i*37%width) }
}

// shifted is f moved by d.
func shifted(f func(int) float64, d float64) func(int) float64 {
	return func(i int) float64 { return f(i) + d }
}
