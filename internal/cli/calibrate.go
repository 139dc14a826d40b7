package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
)

const calibrateUsage = `
Usage: servebench plan --calibrate RUN_DIR [flags]

Fits a performance model to a measured run and predicts loads and
workloads that were not run, through the simulator's scheduler. The model
is engine-agnostic: an engine step costs a fixed time, plus time per
sequence in it, per prompt token it prefills and per cached token it
reads; each request pays a fixed overhead before it is scheduled; the
server runs at most its slot count at once. With --config (or --gguf) and
the --gpu the run measured, it also fits the shared roofline model of that
model and device (compute and bandwidth efficiency, step and request
overhead), and predictions run on that.
Every fitted value comes with
a 95% bootstrap interval (requests resampled) and the fit's residuals.
A run at concurrency 1 and a few users (e.g. 1,4) is enough.
docs/PLANNER.md (Calibration) defines the estimator and its limits.

Examples:
  servebench run --url http://127.0.0.1:11434 --model m --concurrency 1,4 --out runs/c14
  servebench plan --calibrate runs/c14
  servebench plan --calibrate runs/c14 --concurrency 2,8,16 --json
  servebench plan --calibrate runs/c14 --concurrency 8 --prompt-tokens 512,2048 --slots 4
  servebench plan --calibrate runs/c14 --against runs/c2816   # predicted vs measured, held out
  servebench plan --calibrate runs/sweep --fit-concurrency 1,4 --against runs/sweep   # its other points held out
  servebench plan --calibrate runs/c14 --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM   # as efficiencies
  servebench sim --calibrate runs/c14       # serve the fitted model for servebench run
`

type calibrateFlags struct {
	dir, against, conc      string
	fitConc                 string
	prompt, output          string
	requests, warmup, slots int
	bootstrap               int
	seed                    uint64
	json                    bool
	shape                   calibShape
}

func (f *calibrateFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "calibrate", "", "run `directory` (records.jsonl, run.json) to fit the model to")
	fs.StringVar(&f.against, "against", "", "held-out run `directory`: predict its closed-loop points and set its measurements beside them")
	defineFitConcurrency(fs, &f.fitConc, "; --against may then name the same run, whose other points are held out")
	fs.StringVar(&f.conc, "concurrency", "", "concurrencies to predict, e.g. 2,8,16 (default: the run's)")
	fs.StringVar(&f.prompt, "prompt-tokens", "", "prompt lengths to predict (default: the run's mean)")
	fs.StringVar(&f.output, "output-tokens", "", "output lengths to predict (default: the run's mean)")
	fs.IntVar(&f.requests, "requests", 0, "measured requests per predicted point (default: as many as the run's points had)")
	fs.IntVar(&f.warmup, "warmup", -1, "warm-up requests per predicted point (default: as many as the run's)")
	fs.IntVar(&f.slots, "slots", 0, "the server's slot count (OLLAMA_NUM_PARALLEL, max_num_seqs) when the run does not show it")
	fs.IntVar(&f.bootstrap, "bootstrap", calib.DefaultBootstrap, "bootstrap resamples for the intervals")
	fs.Uint64Var(&f.seed, "seed", 1, "bootstrap seed")
	fs.BoolVar(&f.json, "json", false, "write JSON instead of text")
	f.shape.bind(fs)
}

// calibrateRequested reports whether plan's arguments ask for --calibrate.
func calibrateRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "calibrate" {
			return true
		}
	}
	return false
}

func calibrateCmd(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "plan --calibrate", calibrateUsage)
	var f calibrateFlags
	f.bind(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("servebench plan --calibrate runs/a", "unexpected argument %q", fs.Arg(0))
	}
	if f.slots < 0 || f.bootstrap < 0 {
		return usagef("servebench plan --calibrate runs/a --slots 4", "--slots and --bootstrap must not be negative")
	}
	conc, prompts, outputs, err := f.lists()
	if err != nil {
		return err
	}
	only, err := parseConcSet(f.fitConc)
	if err != nil {
		return err
	}
	// The held-out run is read first: a wrong path is told before the fit.
	var against *heldOut
	if f.against != "" {
		if against, err = loadHeldOut(env, f.against, f.dir, only); err != nil {
			return err
		}
	}
	opts := calib.Options{Bootstrap: f.bootstrap, Seed: f.seed, Slots: f.slots}
	c, err := loadCalibration(env, "plan", f.dir, opts, only)
	if err != nil {
		return err
	}
	if err := f.shape.fitShared(c.fit, opts); err != nil {
		return err
	}
	pts, err := f.points(c.summary, conc, prompts, outputs)
	if err != nil {
		return err
	}
	rep, err := c.report(pts, against)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(env.Stdout, rep)
	}
	return writeCalibration(env.Stdout, rep)
}

// calibration is a fit with the run it came from.
type calibration struct {
	dir     string
	only    concSet // the points fitted to (--fit-concurrency); nil: all
	fit     *calib.Fit
	run     *record.Run
	summary *metrics.Summary
}

// defineFitConcurrency defines --fit-concurrency, for plan and sim
// --calibrate.
func defineFitConcurrency(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "fit-concurrency", "", "fit to the run's closed-loop points at these concurrencies only, e.g. 1,4 (default: every point)"+usage)
}

// loadHeldOut reads the held-out run of --against. When it is the run the
// fit reads, its points are those the fit does not (--fit-concurrency), or
// with every point fitted, the run is its own check and not held out.
func loadHeldOut(env *Env, dir, fitDir string, only concSet) (*heldOut, error) {
	h := &heldOut{dir: dir}
	var err error
	if h.summary, err = loadSummary(env, dir, false, sliceFlag{}, keepRecords(&h.records)); err != nil {
		return nil, runDirError("--against", dir, "servebench plan --calibrate runs/a --against runs/b (each a directory written by servebench run --out)", err)
	}
	if !sameDir(dir, fitDir) {
		return h, nil
	}
	h.dir, h.sameRun = fitDir, true // one run, named as --calibrate names it
	if only == nil {
		return h, nil // a check of the fit on its own run; the report says so
	}
	if err := only.missing(h.summary, dir); err != nil {
		return nil, err
	}
	h.summary, h.records = only.part(h.summary, h.records, false)
	if len(ownPoints(h.summary)) == 0 {
		return nil, usagef("servebench plan --calibrate "+fitDir+" --fit-concurrency 1,4 --against "+dir,
			"--fit-concurrency %s takes every closed-loop point of %s: none is left to hold out", only, dir)
	}
	return h, nil
}

// loadCalibration reads a run directory and fits the model to it, for
// servebench cmd (plan or sim) --calibrate: to its closed-loop points at
// the concurrencies of only, or to the whole run when only is nil.
func loadCalibration(env *Env, cmd, dir string, o calib.Options, only concSet) (*calibration, error) {
	example := "servebench " + cmd + " --calibrate runs/a"
	if dir == "" {
		return nil, usagef(example, "--calibrate needs a run directory written by servebench run --out")
	}
	var recs []*record.Record
	sum, err := loadSummary(env, dir, false, sliceFlag{}, keepRecords(&recs))
	if err != nil {
		return nil, runDirError("--calibrate", dir, example+" (a directory written by servebench run --out)", err)
	}
	if only != nil {
		if err := only.missing(sum, dir); err != nil {
			return nil, err
		}
		sum, recs = only.part(sum, recs, true)
	}
	var server map[record.ServerKey]string
	if sum.Run != nil {
		server = sum.Run.Target.Server
	}
	fit, err := calib.Records(recs, server, o)
	if errors.Is(err, calib.ErrTooFew) {
		return nil, &Error{Err: fmt.Errorf("--calibrate %s: %w", dir, err), Hint: "calibrate on a streamed run at concurrency 1 and a few users, e.g. servebench run --concurrency 1,4 --requests 16", Code: ExitFailure}
	}
	if err != nil {
		return nil, err
	}
	return &calibration{dir: dir, only: only, fit: fit, run: sum.Run, summary: sum}, nil
}

// runDirError names the flag whose run directory could not be read, and
// gives the hint of that flag's command: loadSummary's own is report's.
func runDirError(flag, dir, hint string, err error) error {
	e := &Error{Err: err, Code: ExitFailure}
	errors.As(err, &e)
	return &Error{Err: fmt.Errorf("%s %s: %w", flag, dir, e.Err), Hint: hint, Code: e.Code}
}

// keepRecords returns a record callback that appends a copy of each
// record to *dst (the reader reuses its record).
func keepRecords(dst *[]*record.Record) func(*record.Record) {
	return func(r *record.Record) {
		c := *r
		*dst = append(*dst, &c)
	}
}

// calibratedSim puts the model fitted to the run in dir into cfg: its step
// model and overhead, and its slot count, served model name and an
// unbounded KV cache unless the flags set them.
func calibratedSim(env *Env, fs *flag.FlagSet, cfg sim.Config, dir, fitConc string) (sim.Config, error) {
	only, err := parseConcSet(fitConc)
	if err != nil {
		return cfg, err
	}
	c, err := loadCalibration(env, "sim", dir, calib.Options{Bootstrap: 1}, only)
	if err != nil {
		return cfg, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fitted := c.fit.SimConfig()
	cfg.Timer = fitted.Timer
	// The run's step noise and wander, as the predictions simulate them.
	if !set["jitter"] {
		cfg.Jitter = fitted.Jitter
	}
	if !set["wander"] && !set["wander-time"] {
		cfg.Wander, cfg.WanderTime = fitted.Wander, fitted.WanderTime
	}
	if !set["max-num-seqs"] {
		cfg.Engine.MaxNumSeqs = fitted.Engine.MaxNumSeqs
	}
	cfg.Engine.OverheadIn = fitted.Engine.OverheadIn
	if !set["kv-tokens"] {
		cfg.Engine.KVTokens = fitted.Engine.KVTokens
	}
	if !set["max-model-len"] {
		cfg.Model.MaxModelLen = fitted.Model.MaxModelLen
	}
	if !set["model-name"] && c.run != nil && c.run.Target.Model != "" {
		cfg.Model.Name = c.run.Target.Model
	}
	if err := cfg.Validate(); err != nil {
		return cfg, simConfigError(err, err)
	}
	m := c.fit.Model
	fmt.Fprintf(env.Stderr, "servebench sim: step model fitted to %s: %.3g ms + %.3g ms/token above %.0f tokens + %.3g ms/sequence + %.3g ms/KV token; %.3g ms per request (spent in the %s); %d slots; step jitter ±%.3g%%, speed wander %.3g%% over %.3g s\n",
		dir, m.StepMS, m.PerTokenMS, m.MinTokens, m.PerSeqMS, m.PerKVTokenMS, m.RequestOverheadMS, cfg.Engine.OverheadIn, cfg.Engine.MaxNumSeqs,
		100*cfg.Jitter, 100*cfg.Wander, cfg.WanderTime)
	for _, w := range c.fit.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	return cfg, nil
}
