package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/sweep"
)

const sweepUsage = `
Usage: servebench sweep --serve 'CMD ... {port} ... {NAME} ...' --param NAME=V1,V2 [--param ...]
                        [--env K=V ...] [run's flags] --out DIR

Starts a server for each combination of the --param values, waits until it
is ready, measures it as servebench run would (the same loads, workloads,
objective and telemetry, its process's memory and CPU sampled), stops it,
and goes on to the next. {port} is a free loopback port picked for each
server (and the URL measured); {NAME} is a parameter's value, in --serve,
--env, --concurrency, --rate and --gpus, where a load may be arithmetic:
'1,{seqs},{seqs}*2'. The command is split like a shell's words but never
run through a shell: a value is always one argument.

Each configuration gets DIR/NAME: its run directory (stored in the history,
its parameters as labels) and server.log. DIR/sweep.json and
DIR/report.html give every configuration's start-up and run, the Pareto
frontier of per-user decode speed against aggregate throughput, and, with
an objective, the recommended configuration. docs/SWEEP.md. With --live,
one live view shows each configuration's run in turn as it goes.

With --plan-config MODEL (a Hugging Face config.json or a GGUF file),
each configuration is also planned as servebench plan plans it, with
--plan-args (plan's own flags, placeholders expanded; exactly one --gpu)
and the sweep's workload, and its planned memory and decode speed are set
beside the measured ones, with plan --compare's figures for its run.

Examples:
  servebench sweep --serve 'vllm serve meta-llama/Llama-3.1-8B-Instruct --port {port} --max-num-seqs {seqs}' \
      --param seqs=16,64,256 --concurrency '1,{seqs},{seqs}*2' --requests 200 --out runs/seqs
  servebench sweep --serve 'llama-server -m model.gguf --port {port} --parallel {np} -ctk {kv}' \
      --param np=1,4 --param kv=f16,q8_0 --objective chat --out runs/llama
  servebench sweep --serve 'ollama serve' --env OLLAMA_HOST=127.0.0.1:{port} --env OLLAMA_NUM_PARALLEL={np} \
      --param np=1,2,4 --api ollama-chat --model llama3.2 --concurrency 1,2,4 --out runs/ollama
  servebench sweep --serve 'vllm serve M --port {port}' --startup-only --repeat 5 --out runs/cold
  servebench sweep --serve 'vllm serve M --port {port} --tensor-parallel-size {tp}' --param tp=1,2 \
      --plan-config models/M/config.json --plan-args '--gpu H100-SXM --tp {tp}' --concurrency 1,8 --out runs/tp

Exit codes: 0 success (with an objective: a configuration meets it), 1 every configuration
failed, 2 usage error, 3 no configuration meets the objective, 4 none meets it on valid
evidence and one was INCONCLUSIVE, 130 interrupted (what completed is still written).
`

// sweepFlags are sweep's own flags; run's are beside them.
type sweepFlags struct {
	serve        string
	params       []launch.Param
	env          []string
	readyTimeout time.Duration
	stopGrace    time.Duration
	startupOnly  bool
	gpus         string
	planConfig   string
	planArgs     string
}

func (s *sweepFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&s.serve, "serve", "", "the server's command line, with {port} and {NAME} placeholders (never run through a shell)")
	fs.Func("param", "NAME=V1,V2,...: values of {NAME} to sweep (repeatable: the configurations are the cross product)", func(v string) error {
		p, err := launch.ParseParam(v)
		s.params = append(s.params, p)
		return err
	})
	fs.Func("env", "K=V added to the server's environment, with placeholders, e.g. OLLAMA_NUM_PARALLEL={np} (repeatable)", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return errors.New("want K=V, such as OLLAMA_NUM_PARALLEL={np}")
		}
		s.env = append(s.env, v)
		return nil
	})
	fs.DurationVar(&s.readyTimeout, "ready-timeout", bench.DefaultReadyTimeout, "how long a server may take to become ready (port open, model listed, a first token)")
	fs.DurationVar(&s.stopGrace, "stop-grace", launch.DefaultStopGrace, "how long a server has to exit after SIGTERM before its process group is killed")
	fs.BoolVar(&s.startupOnly, "startup-only", false, "measure start-up alone: --repeat N cold starts per configuration, no load")
	fs.StringVar(&s.gpus, "gpus", "", "GPUs each configuration uses, a number or an expression of parameters such as {tp}: throughput is then also per GPU")
	fs.StringVar(&s.planConfig, "plan-config", "", "plan each configuration from this model `file` (Hugging Face config.json or its directory, or GGUF) and set the plan beside its measurement")
	fs.StringVar(&s.planArgs, "plan-args", "", "servebench plan's flags for each configuration, with placeholders: exactly one --gpu, e.g. '--gpu H100-SXM --tp {tp}'")
}

func sweepCmd(ctx context.Context, env *Env, args []string) (err error) {
	defer func() { err = hintAs(err, "sweep", "--serve CMD --out DIR") }()
	var f runFlags
	var s sweepFlags
	fs := newFlagSet(env, "sweep", sweepUsage)
	f.define(fs)
	s.define(fs)
	if err := parseFlags(fs, liveArgs(args)); err != nil {
		return err
	}
	f.apiGiven = flagSet(fs, "api")
	f.hist.args = append([]string{"sweep"}, args...)
	sw, err := s.check(fs, &f)
	if err != nil {
		return err
	}
	// One live view for the whole sweep, before the configurations copy
	// the flags: each configuration's run shows in it in turn.
	if err := f.live.start(env); err != nil {
		return err
	}
	defer f.live.close(ctx, env, f.out)
	restore, err := limitCPUs(f.cpus)
	if err != nil {
		return err
	}
	defer restore()
	runs, err := f.sweepRuns(fs, &s, sw.Configs)
	if err != nil {
		return err
	}
	if sw.Server, err = f.server(env, ""); err != nil {
		return err
	}
	red := backend.NewLaunchRedactor(sw.Server, append(os.Environ(), s.env...))
	env.redactors = append(env.redactors, red, f.tel.redactor())
	sw.API, sw.Model, sw.Redact = f.api, f.model, env.redact
	sw.Measurement = func(c launch.Config, at bench.Launched) (bench.Measurement, error) {
		r := runs[c.Name()]
		m, err := r.flags.forServer(at).measurement(env, r.plan)
		m.Objective = r.objective
		return m, err
	}
	sw.Started = func(c launch.Config, args []string) {
		fmt.Fprintf(env.Stderr, "%s: starting %s\n", c.Name(), strings.Join(launch.Quote(args), " "))
	}
	sw.Ready = func(c launch.Config, st sweep.Startup) {
		fmt.Fprintf(env.Stderr, "%s: %s\n", c.Name(), report.StartupLine(st))
	}
	sw.Measured = func(r *bench.ConfigResult, got *bench.Measured) { f.sweepMeasured(ctx, env, runs, r, got) }
	results := bench.RunSweep(ctx, sw)
	return f.finishSweep(ctx, env, &s, sw, runs, results)
}

// check checks sweep's flags and makes the sweep they ask for, but for
// what the run flags set.
func (s *sweepFlags) check(fs *flag.FlagSet, f *runFlags) (bench.Sweep, error) {
	const hint = "servebench sweep --serve 'vllm serve M --port {port} --max-num-seqs {seqs}' --param seqs=16,64 --out runs/s"
	switch {
	case fs.NArg() > 0:
		return bench.Sweep{}, usagef(hint, "unexpected argument %q (quote the --serve command as one argument)", fs.Arg(0))
	case s.serve == "":
		return bench.Sweep{}, usagef(hint, "--serve is required: the command that starts the server")
	case f.url != "" || f.simConfig != "":
		return bench.Sweep{}, usagef(hint, "sweep measures the servers it starts, at {port}: it takes no --url or --sim-config")
	case f.out == "":
		return bench.Sweep{}, usagef(hint, "--out DIR is required: each configuration's run and server.log go under it")
	case s.planArgs != "" && s.planConfig == "":
		return bench.Sweep{}, usagef(planArgsHint, "--plan-args needs --plan-config: the model file to plan from")
	case !slices.Contains(tableFormats, f.format):
		return bench.Sweep{}, usagef("servebench sweep ... --format markdown  or  --json (sweep.json); each configuration's CSV: servebench report --format csv DIR/NAME",
			"--format %s: a sweep prints several tables; give %s", f.format, strings.Join(tableFormats, ", "))
	}
	if err := backend.CheckAPI(f.api, "x"); err != nil {
		return bench.Sweep{}, usagef("servebench sweep --serve CMD --out DIR --api openai-chat", "--api: %v", err)
	}
	words, err := launch.Split(s.serve)
	if err != nil {
		return bench.Sweep{}, usagef(hint, "--serve: %v", err)
	}
	if !launch.Places(words, launch.PortName) && !launch.Places(s.env, launch.PortName) {
		return bench.Sweep{}, usagef(hint, "--serve (or an --env) must place {port}: the sweep picks a free port for each server and measures it there")
	}
	configs, err := launch.Configs(s.params)
	if err != nil {
		return bench.Sweep{}, usagef(hint, "%v", err)
	}
	sw := bench.Sweep{Serve: words, Env: s.env, Configs: configs, Out: f.out, ReadyTimeout: s.readyTimeout,
		StopGrace: s.stopGrace, StartupOnly: s.startupOnly, Repeat: 1, PlanConfig: s.planConfig}
	if s.startupOnly {
		// --repeat counts cold starts here, not repeats of a load
		sw.Repeat, f.slo.repeat = f.slo.repeat, 1
	}
	if err := launch.CheckConfigs(append(append([]string{}, words...), s.env...), configs); err != nil {
		return bench.Sweep{}, usagef(hint, "--serve: %v", err)
	}
	return sw, nil
}

// sweepRun is one configuration's run as the flags ask for it: run's
// flags with the configuration's loads, its objective and its points.
type sweepRun struct {
	flags     *runFlags
	objective *slo.Objective
	plan      *bench.Plan
	gpus      float64
	// planned is its plan (--plan-config), nil when none is asked for.
	planned *sweep.PlanSpec
}

// sweepRuns makes every configuration's run before any server starts, so
// that a load or objective that cannot be used stops the sweep at once.
func (f *runFlags) sweepRuns(fs *flag.FlagSet, s *sweepFlags, configs []launch.Config) (map[string]*sweepRun, error) {
	runs := map[string]*sweepRun{}
	for _, c := range configs {
		cf, err := f.forConfig(c)
		if err != nil {
			return nil, err
		}
		r := &sweepRun{flags: cf}
		if s.gpus != "" {
			if r.gpus, err = launch.ExpandNumber(s.gpus, c.Values); err != nil || r.gpus <= 0 {
				return nil, usagef("servebench sweep --gpus '{tp}' --param tp=1,2", "--gpus %q: want a positive number of GPUs for %s", s.gpus, c)
			}
		}
		cf.hist.labels = bench.ConfigLabels(f.hist.labels, c, f.out, r.gpus)
		if err := benchError(rundir.Check(cf.out)); err != nil {
			return nil, err
		}
		runs[c.Name()] = r
		if !s.startupOnly {
			if cf.slo.active() {
				if r.objective, err = cf.objective(fs); err != nil {
					return nil, err
				}
			}
			if r.plan, err = cf.plan(r.objective); err != nil {
				return nil, err
			}
		}
		if r.planned, err = s.planSpec(c, r.plan); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// forConfig is the flags for one configuration: its loads expanded, its
// run in DIR/NAME (its labels are bench.ConfigLabels).
func (f *runFlags) forConfig(c launch.Config) (*runFlags, error) {
	cf := *f
	var err error
	for _, l := range []struct {
		name string
		v    *string
	}{{"concurrency", &cf.concurrency}, {"rate", &cf.rate}} {
		if *l.v == "" {
			continue
		}
		if *l.v, err = launch.ExpandList(*l.v, c.Values); err != nil {
			return nil, usagef("servebench sweep --concurrency '1,{seqs},{seqs}*2' --param seqs=8,16", "--%s%s: %v", l.name, forConfig(c), err)
		}
	}
	cf.out = bench.ConfigDir(f.out, c)
	return &cf, nil
}

// forServer is the flags measuring a configuration's ready server, its
// process sampled.
func (f *runFlags) forServer(at bench.Launched) *runFlags {
	cf := *f
	cf.url, cf.tel.opts.ServerPID = at.URL, at.PID
	return &cf
}

// sweepMeasured says how a configuration ended, stores its run in the
// history and writes its report.
func (f *runFlags) sweepMeasured(ctx context.Context, env *Env, runs map[string]*sweepRun, r *bench.ConfigResult, got *bench.Measured) {
	name := r.Config.Name()
	if got != nil && got.Result != nil {
		run := runs[name]
		if got.Report != nil {
			run.flags.remember(ctx, env, got.Report.Summary, run.objective, got.Report.Verdict)
			if !f.sweepJSON() {
				if err := run.flags.renderObjective(env, got.Report); err != nil {
					fmt.Fprintf(env.Stderr, "warning: %v\n", err)
				}
			}
		} else {
			run.flags.remember(ctx, env, got.Result.Summary, nil, nil)
			if render, err := formatRenderer("run", f.format); err == nil && !f.sweepJSON() {
				if err := render(env.Stdout, got.Result.Summary); err != nil {
					fmt.Fprintf(env.Stderr, "warning: %v\n", err)
				}
			}
		}
		writeRunFiles(env, run.flags.out, got.Result)
	}
	if r.Error != "" {
		fmt.Fprintf(env.Stderr, "%s: FAILED: %s\n", name, r.Error)
		if r.LogTail != "" {
			fmt.Fprintf(env.Stderr, "  the end of %s:\n    %s\n", filepath.Join(r.Dir, bench.ServerLog), strings.ReplaceAll(r.LogTail, "\n", "\n    "))
		}
	}
}

// finishSweep writes sweep.json and the sweep's report, prints the
// table and says how the sweep ended in its exit code.
func (f *runFlags) finishSweep(ctx context.Context, env *Env, s *sweepFlags, sw bench.Sweep, runs map[string]*sweepRun, results []*bench.ConfigResult) error {
	var o *slo.Objective
	for _, r := range results {
		if run := runs[r.Config.Name()]; run != nil && run.objective != nil && o == nil {
			o = run.objective
		}
	}
	gpus := func(c launch.Config) float64 { return runs[c.Name()].gpus }
	plans := func(c launch.Config) *sweep.PlanSpec {
		if run := runs[c.Name()]; run != nil {
			return run.planned
		}
		return nil
	}
	file := sw.File(s.params, results, gpus, plans, o)
	if err := sweep.Write(f.out, file); err != nil {
		return &Error{Err: fmt.Errorf("--out: %w", err), Code: ExitFailure}
	}
	format := f.format // one of tableFormats (check)
	if f.sweepJSON() {
		format = "json"
	}
	if err := sweepRenderers[format](env.Stdout, file); err != nil {
		return err
	}
	if herr := report.WriteSweepPage(f.out, file); herr != nil {
		fmt.Fprintf(env.Stderr, "warning: %s not written: %v\n", filepath.Join(f.out, rundir.ReportFile), herr)
	}
	fmt.Fprintf(env.Stderr, "sweep written to %s (%s, %s)\n", f.out, sweep.FileName, rundir.ReportFile)
	return sweepExit(ctx, file)
}

// sweepJSON: stdout is sweep.json alone.
func (f *runFlags) sweepJSON() bool { return f.jsonOut || f.format == "json" }

// sweepExit is the exit code of a sweep: interrupted, every
// configuration failed, or, with an objective, none meets it.
func sweepExit(ctx context.Context, file *sweep.File) error {
	failed := file.Failed()
	switch {
	case ctx.Err() != nil:
		return &Error{Err: errors.New("interrupted: sweep.json covers the configurations done so far"), Code: ExitInterrupted}
	case failed == len(file.Configs):
		return &Error{Err: fmt.Errorf("every configuration failed (%d of %d)", failed, len(file.Configs)),
			Hint: "see each configuration's reason above, and its server.log", Code: ExitFailure}
	case file.Objective == "" || file.Recommended != "":
		return nil
	case len(file.Inconclusive) > 0:
		return &Error{Err: fmt.Errorf("objective %s: %s", file.Objective, file.Why), Hint: hintInconclusive, Code: ExitInconclusive}
	}
	return &Error{Err: fmt.Errorf("objective %s: %s", file.Objective, file.Why), Code: ExitObjective}
}
