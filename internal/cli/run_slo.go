package cli

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/workload"
)

// sloFlags are run's objective flags. Any of them turns run into the
// objective flow: per-load verdicts, capacity, saturation, exit code 3.
type sloFlags struct {
	objective    string
	slos         []slo.SLO
	findCapacity bool
	repeat       int
	targetLoad   float64
}

func (f *runFlags) defineSLO(fs *flag.FlagSet) {
	s := &f.slo
	fs.StringVar(&s.objective, "objective", "", "serving objective to judge the server by: a preset ("+strings.Join(slo.PresetNames, ", ")+") or a YAML file (servebench objective -h); flags override its fields")
	fs.Func("slo", "an SLO, e.g. 'ttft p95 <= 1.5s' or 'speed p95 >= 20 tok/s' (repeatable; replaces the objective's SLO on the same metric and percentile)", func(v string) error {
		x, err := slo.Parse(v)
		s.slos = append(s.slos, x)
		return err
	})
	fs.BoolVar(&s.findCapacity, "find-capacity", false, "search for the highest load at which every SLO holds: raise the load geometrically from the lowest given, then bisect")
	fs.IntVar(&s.repeat, "repeat", 1, "run each load point N times; verdicts pool the repeats and give bootstrap confidence intervals")
	fs.Float64Var(&s.targetLoad, "target-load", 0, "the load (concurrency or rate) at which the objective must hold (default: the objective's target, else the highest load)")
}

func (s *sloFlags) active() bool {
	return s.objective != "" || len(s.slos) > 0 || s.findCapacity || s.repeat != 1
}

// judged ends a run with an objective (bench.Measure judged it): the
// verdict stored, printed and written, and exit 3 when the objective does
// not hold at its target load.
func (f *runFlags) judged(ctx context.Context, env *Env, o *slo.Objective, got *bench.Measured, err error) error {
	rep, res := got.Report, got.Result
	f.remember(ctx, env, rep.Summary, o, rep.Verdict)
	if rerr := f.renderObjective(env, rep); rerr != nil && err == nil {
		err = rerr
	}
	writeRunFiles(env, f.out, res)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		return err
	case res.Interrupted || ctx.Err() != nil:
		return &Error{Err: errors.New("interrupted: the summary and verdict cover the requests that completed"), Code: ExitInterrupted}
	case rep.Verdict.Failing:
		return unmet(o, rep.Verdict)
	case rep.Summary.AllFailed():
		return allFailed(rep.Summary)
	case !rep.Verdict.Holds:
		return unmet(o, rep.Verdict)
	}
	return nil
}

func (f *runFlags) renderObjective(env *Env, rep *slo.Report) error {
	format := f.format
	if f.jsonOut {
		format = "json"
	}
	return renderReport(env.Stdout, rep, format)
}

// objective builds the objective of a run: --objective (or one made of
// --slo alone) with the command line's overrides (slo.Resolve).
func (f *runFlags) objective(fs *flag.FlagSet) (*slo.Objective, error) {
	const hint = "servebench run --objective chat  or  --slo 'ttft p95 <= 1s'"
	if f.slo.repeat < 1 || f.slo.repeat > 1000 {
		return nil, usagef("servebench run --repeat 3", "--repeat %d: want a whole number in [1, 1000]", f.slo.repeat)
	}
	o := &slo.Objective{Name: "command-line", Priority: slo.PriorityResponsiveness, Load: slo.Load{Concurrency: bench.DefaultConcurrency()}}
	var err error
	if f.slo.objective != "" {
		if o, err = loadObjective(f.slo.objective); err != nil {
			return nil, err
		}
	} else if len(f.slo.slos) == 0 {
		return nil, usagef(hint, "--find-capacity and --repeat judge a serving objective: give --objective or --slo")
	}
	ov, err := f.overrides(fs)
	if err != nil {
		return nil, err
	}
	r, err := slo.Resolve(*o, ov)
	switch {
	case errors.Is(err, slo.ErrClosedAndOpen):
		return nil, usagef(hintClosedOrOpen, "%v", err)
	case errors.As(err, new(*workload.SpecError)):
		return nil, specUsage(err)
	case err != nil:
		return nil, usagef(hint, "%v", err)
	}
	return r, nil
}

// overrides are the objective's fields the flags given set, parsed.
func (f *runFlags) overrides(fs *flag.FlagSet) (slo.Overrides, error) {
	ov := slo.Overrides{PromptTokens: f.promptTokens.vals, OutputTokens: f.outputTokens.vals,
		Workload: f.workload, SLOs: f.slo.slos, Target: f.slo.targetLoad}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		ov.WorkloadGiven = append(ov.WorkloadGiven, fl.Name)
		switch fl.Name {
		case "max-concurrency":
			ov.MaxConcurrency = &f.maxConcurrency
		case "requests":
			ov.Requests = &f.requests
		case "duration":
			ov.Duration = &f.dur
		case "warmup":
			ov.Warmup = &slo.Warmup{Requests: f.warmup.requests, Duration: f.warmup.duration}
		}
	})
	if f.rate != "" {
		ov.Rate, err = floatList("rate", f.rate)
	}
	if f.concurrency != "" && err == nil {
		ov.Concurrency, err = intList("concurrency", f.concurrency)
	}
	return ov, err
}
