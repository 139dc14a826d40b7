package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/rundir"
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

// runObjective is run with an objective: measure, judge, print, and exit 3
// when the objective does not hold at its target load.
func (f *runFlags) runObjective(ctx context.Context, env *Env, fs *flag.FlagSet) error {
	o, err := f.objective(fs)
	if err != nil {
		return err
	}
	plan, err := f.plan()
	if err != nil {
		return err
	}
	if _, err := formatRenderer("run", f.format); err != nil {
		return err
	}
	if err := benchError(rundir.Check(f.out)); err != nil {
		return err
	}
	t, err := startTarget(ctx, env, f)
	if err != nil {
		return err
	}
	defer t.Close()
	t.Describe(ctx)
	rep, res, err := f.judge(ctx, env, o, t, plan)
	if res == nil {
		return err
	}
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

// judge measures the objective against a started target in one session
// (bench.Judge) and returns the report.
func (f *runFlags) judge(ctx context.Context, env *Env, o *slo.Objective, t *bench.Target, plan *loadPlan) (*slo.Report, *bench.Result, error) {
	cfg, err := f.benchConfig(ctx, env, t, plan)
	if err != nil {
		return nil, nil, err
	}
	rep, res, err := bench.Judge(ctx, cfg, o, bench.JudgeOptions{Base: plan.points[0], Repeat: f.slo.repeat,
		FindCapacity: f.slo.findCapacity, Workloads: bench.CellLabels(plan.cells)})
	if res != nil && rep != nil {
		f.remember(ctx, env, rep.Summary, o, rep.Verdict)
	}
	return rep, res, benchError(err)
}

// objective builds the objective of a run: --objective (or one made of
// --slo alone), with the command line's flags overriding its fields.
func (f *runFlags) objective(fs *flag.FlagSet) (*slo.Objective, error) {
	const hint = "servebench run --objective chat  or  --slo 'ttft p95 <= 1s'"
	if f.slo.repeat < 1 || f.slo.repeat > 1000 {
		return nil, usagef("servebench run --repeat 3", "--repeat %d: want a whole number in [1, 1000]", f.slo.repeat)
	}
	o := &slo.Objective{Name: "command-line", Priority: slo.PriorityResponsiveness}
	if f.slo.objective != "" {
		var err error
		if o, err = loadObjective(f.slo.objective); err != nil {
			return nil, err
		}
	} else if len(f.slo.slos) == 0 {
		return nil, usagef(hint, "--find-capacity and --repeat judge a serving objective: give --objective or --slo")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.overlay(o, set); err != nil {
		return nil, err
	}
	for _, s := range f.slo.slos {
		o.SetSLO(s)
	}
	if f.slo.targetLoad > 0 {
		o.Load.Target = f.slo.targetLoad
	}
	if len(o.Checks()) == 0 {
		return nil, usagef(hint, "objective %s has no SLO", o.Name)
	}
	if err := o.Validate(); err != nil {
		return nil, usagef(hint, "objective %s: %v", o.Name, err)
	}
	return o, nil
}

// overlay makes the objective and run's flags agree: a flag given on the
// command line overrides the objective's field, and an objective field
// fills in a flag that was not given.
func (f *runFlags) overlay(o *slo.Objective, set map[string]bool) error {
	w := &o.Workload
	f.overlayLengths(o, set)
	overlaySpec(&f.workload, w, set)
	if err := f.overlayLoad(&o.Load, set); err != nil {
		return err
	}
	if set["max-concurrency"] {
		o.Load.MaxConcurrency = f.maxConcurrency
	} else {
		f.maxConcurrency = o.Load.MaxConcurrency
	}
	return f.overlayAmount(&o.Load, set)
}

// overlayLengths makes the objective's workloads and the length flags
// agree. Length flags given replace the objective's lengths and its list
// of workloads (several make a matrix); otherwise the objective's list,
// or its lengths, stand for the flags.
func (f *runFlags) overlayLengths(o *slo.Objective, set map[string]bool) {
	w := &o.Workload
	if !set["prompt-tokens"] && !set["output-tokens"] && len(o.Workloads) > 0 {
		f.objectiveCells = o.Workloads
		return
	}
	for _, p := range []struct {
		flag string
		run  *lengthsFlag
		obj  string
	}{{"prompt-tokens", &f.promptTokens, w.PromptTokens}, {"output-tokens", &f.outputTokens, w.OutputTokens}} {
		if !set[p.flag] && p.obj != "" {
			p.run.vals = []string{p.obj}
		}
	}
	o.Workloads = nil
	prompts, outputs := f.promptTokens.list(), f.outputTokens.list()
	if len(prompts) == 1 && len(outputs) == 1 {
		w.PromptTokens, w.OutputTokens = prompts[0], outputs[0]
		return
	}
	// A matrix: its cells are the objective's workloads (a repeated
	// distribution is refused when the run is planned).
	w.PromptTokens, w.OutputTokens = "", ""
	o.Workloads, _ = workload.Cross(prompts, outputs)
}

// overlaySpec overlays the workload fields other than the lengths; a
// field's flag is its YAML key with dashes (docs/WORKLOADS.md).
func overlaySpec(run, obj *workload.Spec, set map[string]bool) {
	rv, ov := reflect.ValueOf(run).Elem(), reflect.ValueOf(obj).Elem()
	for i := range rv.NumField() {
		key, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
		if key == "" || key == "-" || key == "prompt_tokens" || key == "output_tokens" {
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		if key == "format" || key == "order" {
			name = "dataset-" + key
		}
		if set[name] || ov.Field(i).IsZero() {
			ov.Field(i).Set(rv.Field(i))
		} else {
			rv.Field(i).Set(ov.Field(i))
		}
	}
}

func (f *runFlags) overlayLoad(l *slo.Load, set map[string]bool) error {
	if !set["concurrency"] && !set["rate"] && len(l.Levels()) > 0 {
		f.concurrency, f.rate = "", ""
		if l.Open() {
			f.rate = joinNums(l.Rate)
		} else {
			f.concurrency = joinNums(l.Concurrency)
		}
		return nil
	}
	wasOpen, had := l.Open(), len(l.Levels()) > 0
	l.Concurrency, l.Rate = nil, nil
	var err error
	if f.rate != "" {
		l.Rate, err = floatList("rate", f.rate)
	} else {
		l.Concurrency, err = intList("concurrency", cmp.Or(f.concurrency, defaultConcurrency))
	}
	if !had || wasOpen != l.Open() {
		l.Target = 0 // a concurrency is no target for a rate, nor the reverse
	}
	return err
}

// overlayAmount overlays how long each point runs: requests and duration
// go together, and so does the warm-up.
func (f *runFlags) overlayAmount(l *slo.Load, set map[string]bool) error {
	if set["requests"] || set["duration"] || (l.Requests == 0 && l.Duration == "") {
		l.Requests, l.Duration = f.requests, ""
		if f.dur > 0 {
			l.Duration = f.dur.String()
		}
	} else {
		f.requests, f.dur = l.Requests, 0
		if l.Duration != "" {
			f.dur, _ = time.ParseDuration(l.Duration) // validated with the objective
		}
	}
	if set["warmup"] || l.Warmup == "" {
		if s := f.warmup.String(); s != "0" {
			l.Warmup = s
		}
		return nil
	}
	return f.warmup.Set(l.Warmup)
}

func joinNums[T int | float64](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
