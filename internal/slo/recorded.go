package slo

import (
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// JudgeRecorded judges recorded load points, summarised in s, as run
// judged them while measuring: ev holds the same records. The records say
// which loads were measured, and o's loads become those (o keeps its
// target, when it names one, and its SLOs); loads recorded more than once
// (run --repeat) get confidence intervals. What the records cannot say is
// whether run stopped a point early as overloaded; such a point is judged
// on the requests it completed.
func JudgeRecorded(o *Objective, ev *Evaluator, s *metrics.Summary) *Report {
	seen := map[record.Load]int{}
	listed := map[record.Load]bool{} // a load once, whatever the workload cells
	hadClosed, hadOpen := len(o.Load.Concurrency) > 0, len(o.Load.Rate) > 0
	o.Load.Concurrency, o.Load.Rate = nil, nil
	for _, p := range s.Points {
		bare := p.Load
		bare.Workload = ""
		if seen[p.Load]++; listed[bare] {
			continue
		}
		listed[bare] = true
		if p.Load.Rate > 0 {
			o.Load.Rate, o.Load.MaxConcurrency = append(o.Load.Rate, p.Load.Rate), p.Load.MaxConcurrency
		} else {
			o.Load.Concurrency = append(o.Load.Concurrency, p.Load.Concurrency)
		}
	}
	if (o.Load.Open() && hadClosed) || (!o.Load.Open() && hadOpen) {
		o.Load.Target = 0 // a concurrency is no target for a rate, nor the reverse (as Resolve)
	}
	if s.Run != nil && s.Run.Trace != nil {
		// a replay judged as run judged it (OnTrace), every recorded
		// rate listed: a target given, else the trace's own rate
		levels, target := o.Load.Rate, o.Load.Target
		o.OnTrace(s.Run.Trace.NominalRate(), o.Load.MaxConcurrency, target)
		o.Load.Rate = levels
	}
	opts := Options{Seed: 1}
	for _, n := range seen {
		opts.Intervals = opts.Intervals || n > 1
	}
	var server map[record.ServerKey]string
	if s.Run != nil {
		server = s.Run.Target.Server
		opts.Seed = s.Run.Seed
	}
	rep := &Report{Objective: o, Summary: s}
	ev.Qualify(s.Points)
	rep.Verdict = Judge(o, ev.Evaluate(o.Checks(), opts), nil, server)
	return rep
}

// JudgeRead judges the run read summarises as run judged it
// (JudgeRecorded): read hands each record to observe as it reads them,
// so that goodput is counted as they come and a bounded sample is kept
// for intervals. A named objective (a preset or a file) comes with its
// workload, and SLOs set for it say little about another: a run of
// another workload is judged all the same, with a warning
// (WorkloadDifference). o is left as it is: the report's objective is a
// copy, its loads the run's (and a replay's rate, OnTrace).
func JudgeRead(o *Objective, named bool, read func(observe func(*record.Record)) (*metrics.Summary, error)) (*Report, error) {
	ev := &Evaluator{Checks: o.Checks()}
	s, err := read(ev.Add)
	if err != nil {
		return nil, err
	}
	if named {
		if w := WorkloadDifference(o, s.Run); w != "" {
			s.Warnings = append(s.Warnings, w)
		}
	}
	judged := *o
	return JudgeRecorded(&judged, ev, s), nil
}
