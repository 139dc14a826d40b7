package slo

import (
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// A recorded run is judged at its own loads: a target of the other kind
// than the run's (a closed-loop preset's concurrency for a run of rates)
// is set aside, a target given on the command line (Overlay) stands, and
// a trace replay is judged as run judged it: at the trace's own rate
// unless a target is given, its capacity said against that rate.
func TestJudgeRecordedTarget(t *testing.T) {
	rates := []metrics.PointSummary{{Load: record.Load{Rate: 2.27}}, {Load: record.Load{Rate: 4.54}}, {Load: record.Load{Rate: 3.4}}}
	trace := &record.Run{Trace: &record.Trace{MeanRate: 2.2734}}
	preset := func() *Objective {
		return &Objective{Name: "chat", SLOs: mustParse(t, "ttft p95 <= 1s"), Load: Load{Concurrency: []int{1, 8}, Target: 8}}
	}
	for _, c := range []struct {
		name      string
		run       *record.Run
		flag      float64 // --target-load (0: none)
		want      record.Load
		traceRate float64
	}{
		{"a preset's concurrency is no target for rates", &record.Run{}, 0, record.Load{Rate: 4.54}, 0},
		{"a target given stands", &record.Run{}, 3.4, record.Load{Rate: 3.4}, 0},
		{"a replay: the trace's rate", trace, 0, record.Load{Rate: 2.27}, 2.27},
		{"a replay, a target given", trace, 4.54, record.Load{Rate: 4.54}, 2.27},
	} {
		o := preset()
		o.Overlay(nil, c.flag)
		rep := JudgeRecorded(o, &Evaluator{}, &metrics.Summary{Run: c.run, Points: rates})
		if got := rep.Verdict.TargetLoad; got != c.want || o.TraceRate != c.traceRate || len(o.Load.Rate) != 3 {
			t.Errorf("%s: target %v, trace rate %v, levels %v; want %v, %v, every recorded rate", c.name, got, o.TraceRate, o.Load.Rate, c.want, c.traceRate)
		}
	}
}
