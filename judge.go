package servebench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

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
	t, cfg, err := start(ctx, b)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	ev := &slo.Evaluator{}
	opt := bench.JudgeOptions{Base: cfg.Points[0], Repeat: o.Repeat, FindCapacity: o.FindCapacity, Eval: ev}
	rep, res, err := bench.Judge(ctx, cfg, obj, opt)
	if res == nil {
		return nil, err
	}
	if err == nil {
		err = ctx.Err()
	}
	return &Report{Result: &Result{Summary: res.Summary, Records: res.Records, Interrupted: res.Interrupted, eval: ev},
		Verdict: rep.Verdict}, err
}

// objective is o over the benchmark's workload and loads, checked.
func (b Benchmark) objective(o Objective) (*slo.Objective, error) {
	obj := &slo.Objective{Name: cmp.Or(o.Name, "objective"), Priority: slo.PriorityResponsiveness}
	for _, expr := range o.SLOs {
		s, err := slo.Parse(expr)
		if err != nil {
			return nil, fmt.Errorf("servebench: objective: %w", err)
		}
		obj.SetSLO(s)
	}
	w, opts := b.Workload, b.Options
	obj.Workload.PromptTokens = cmp.Or(w.PromptTokens, defaultPromptTokens)
	obj.Workload.OutputTokens = cmp.Or(w.OutputTokens, defaultOutputTokens)
	_, loads, err := b.points()
	if err != nil {
		return nil, err
	}
	for _, l := range loads {
		if l.Rate > 0 {
			obj.Load.Rate = append(obj.Load.Rate, l.Rate)
		} else {
			obj.Load.Concurrency = append(obj.Load.Concurrency, l.Concurrency)
		}
	}
	obj.Load.MaxConcurrency, obj.Load.Target = b.Loads.MaxConcurrency, o.TargetLoad
	obj.Load.Requests = opts.Requests
	if opts.Duration > 0 {
		obj.Load.Duration = opts.Duration.String()
	} else if opts.Requests == 0 {
		obj.Load.Requests = defaultRequests
	}
	if opts.WarmupDuration > 0 {
		obj.Load.Warmup = opts.WarmupDuration.String()
	} else if opts.WarmupRequests > 0 {
		obj.Load.Warmup = strconv.Itoa(opts.WarmupRequests)
	}
	if len(obj.Checks()) == 0 {
		return nil, errNoSLO
	}
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("servebench: objective: %w", err)
	}
	return obj, nil
}

// errNoSLO: an objective needs something to judge.
var errNoSLO = errors.New("servebench: the objective has no SLO")
