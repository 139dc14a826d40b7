package slo

import (
	"errors"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
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

// TestJudgeRead: the caller's objective is left as it was, the report's judged at the run's loads (a replay's at
// its rate, said as the trace's, so that the report can say capacity as
// a multiple of it); a named objective warns of another workload, one
// made of the command line's SLOs does not.
func TestJudgeRead(t *testing.T) {
	run := &record.Run{PromptTokens: "512", OutputTokens: "128", Trace: &record.Trace{MeanRate: 2}}
	read := func(observe func(*record.Record)) (*metrics.Summary, error) {
		for range 4 {
			observe(&record.Record{Load: record.Load{Rate: 2}})
		}
		return &metrics.Summary{Run: run, Points: []metrics.PointSummary{{Load: record.Load{Rate: 2}}}}, nil
	}
	for _, named := range []bool{true, false} {
		o := &Objective{Name: "chat", SLOs: mustParse(t, "ttft p95 <= 1s"), Load: Load{Concurrency: []int{1, 8}, Target: 8},
			Workload: workload.Spec{PromptTokens: "1024", OutputTokens: "256"}}
		rep, err := JudgeRead(o, named, read)
		if err != nil {
			t.Fatal(err)
		}
		if o.TraceRate != 0 || len(o.Load.Rate) != 0 || len(o.Load.Concurrency) != 2 || o.Load.Target != 8 {
			t.Errorf("named %v: the caller's objective changed: %+v", named, o.Load)
		}
		if rep.Objective == o || rep.Objective.TraceRate != 2 || rep.Verdict.TargetLoad != (record.Load{Rate: 2}) {
			t.Errorf("named %v: judged objective %p (caller's %p), trace rate %v, target %v; want a copy at the trace's rate 2",
				named, rep.Objective, o, rep.Objective.TraceRate, rep.Verdict.TargetLoad)
		}
		if warned := len(rep.Summary.Warnings) > 0; warned != named {
			t.Errorf("named %v: warnings %q", named, rep.Summary.Warnings)
		}
	}
	if _, err := JudgeRead(&Objective{}, false, func(func(*record.Record)) (*metrics.Summary, error) { return nil, errBadRead }); err != errBadRead {
		t.Errorf("a read that fails: %v, want its error", err)
	}
}

var errBadRead = errors.New("unreadable")
