package servebench

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/slo"
)

// Objective is a serving objective: SLOs that must hold at a target load
// of a Benchmark's Loads. The zero value has no SLO, which Judge refuses.
type Objective struct {
	// Name names the objective in the verdict; empty: "objective".
	Name string
	// SLOs are written as servebench run --slo takes them: "ttft p95 <=
	// 1.5s", "speed p95 >= 20 tok/s" (95% of requests decode at 20 tok/s
	// or faster), "error_rate <= 1%" (docs/METRICS.md, Objectives).
	SLOs []string
	// TargetLoad is the concurrency or rate at which the SLOs must hold;
	// 0: the highest of the Loads.
	TargetLoad float64
	// FindCapacity searches for the highest load at which every SLO
	// holds, raising the load from the lowest of the Loads, then bisecting.
	FindCapacity bool
	// Repeat runs each load that many times (0: once); the verdicts then
	// carry confidence intervals.
	Repeat int
}

// Verdict is an objective's verdict: Holds, Inconclusive (the evidence
// cannot say: the simulator fell behind its clock, the client saturated,
// too few requests), the reasons, each load's SLO results, the capacity
// and the saturation point (summary.json's verdict, docs/OUTPUT.md).
type Verdict = slo.Verdict

// Report is a run judged against an objective.
type Report struct {
	*Result
	Verdict *Verdict
}

// Judge measures the benchmark against the objective in one run: it
// sweeps the loads (or searches for the capacity), stops a load early when
// the server is clearly overloaded, and judges. On an error after the run
// started, the report covers what completed.
func Judge(ctx context.Context, b Benchmark, o Objective) (*Report, error) {
	obj, err := b.objective(o)
	if err != nil {
		return nil, err
	}
	m, err := b.measurement()
	if err != nil {
		return nil, err
	}
	m.Objective, m.Judge = obj, bench.JudgeOptions{Repeat: o.Repeat, FindCapacity: o.FindCapacity}
	got, err := bench.Measure(ctx, m)
	if got == nil || got.Result == nil {
		return nil, err
	}
	if err == nil {
		err = ctx.Err()
	}
	return &Report{Result: result(got, m.Eval), Verdict: got.Report.Verdict}, err
}

// objective is o over the benchmark's workload and loads, resolved as
// servebench run resolves its flags over an objective (slo.Resolve): the
// benchmark's settings are the overrides of an objective holding only o's
// name and priority.
func (b Benchmark) objective(o Objective) (*slo.Objective, error) {
	_, loads, err := b.points()
	if err != nil {
		return nil, err
	}
	w, opts := b.Workload, b.Options
	ov := slo.Overrides{Target: o.TargetLoad, MaxConcurrency: &b.Loads.MaxConcurrency, Duration: &opts.Duration,
		PromptTokens: []string{cmp.Or(w.PromptTokens, bench.DefaultPromptTokens)}, OutputTokens: []string{cmp.Or(w.OutputTokens, bench.DefaultOutputTokens)}}
	requests := opts.Requests
	if requests == 0 && opts.Duration == 0 {
		requests = bench.DefaultRequests
	}
	ov.Requests = &requests
	if opts.WarmupRequests > 0 || opts.WarmupDuration > 0 {
		ov.Warmup = &slo.Warmup{Requests: opts.WarmupRequests, Duration: opts.WarmupDuration}
	}
	for _, l := range loads {
		if l.Rate > 0 {
			ov.Rate = append(ov.Rate, l.Rate)
		} else {
			ov.Concurrency = append(ov.Concurrency, l.Concurrency)
		}
	}
	for _, expr := range o.SLOs {
		s, err := slo.Parse(expr)
		if err != nil {
			return nil, fmt.Errorf("servebench: objective: %w", err)
		}
		ov.SLOs = append(ov.SLOs, s)
	}
	if len(ov.SLOs) == 0 {
		return nil, errNoSLO
	}
	r, err := slo.Resolve(slo.Objective{Name: cmp.Or(o.Name, "objective"), Priority: slo.PriorityResponsiveness}, ov)
	if err != nil {
		return nil, fmt.Errorf("servebench: %w", err)
	}
	return r, nil
}

// errNoSLO: an objective needs something to judge.
var errNoSLO = errors.New("servebench: the objective has no SLO")
