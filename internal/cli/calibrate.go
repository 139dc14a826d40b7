package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/report"
)

const calibrateUsage = `
Usage: servebench calibrate RUN_DIR [flags]

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
  servebench calibrate runs/c14
  servebench calibrate runs/c14 --concurrency 2,8,16 --json
  servebench calibrate runs/c14 --concurrency 8 --prompt-tokens 512,2048 --slots 4
  servebench calibrate runs/c14 --against runs/c2816   # predicted vs measured, held out
  servebench calibrate runs/sweep --fit-concurrency 1,4 --against runs/sweep   # its other points held out
  servebench calibrate runs/c14 --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM   # as efficiencies
  servebench sim --calibrate runs/c14       # serve the fitted model for servebench run
`

type calibrateFlags struct {
	against, conc           string
	fitConc                 string
	prompt, output          string
	requests, warmup, slots int
	bootstrap               int
	seed                    uint64
	json                    bool
	shape                   calibShape
}

func (f *calibrateFlags) bind(fs *flag.FlagSet) {
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

func calibrateCmd(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "calibrate", calibrateUsage)
	var f calibrateFlags
	f.bind(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("servebench calibrate runs/a", "unexpected argument %q", fs.Arg(1))
	}
	if f.slots < 0 || f.bootstrap < 0 {
		return usagef("servebench calibrate runs/a --slots 4", "--slots and --bootstrap must not be negative")
	}
	loads, err := f.loads()
	if err != nil {
		return err
	}
	only, err := parseConcSet(f.fitConc)
	if err != nil {
		return err
	}
	dir := fs.Arg(0)
	if dir == "" {
		return usagef("servebench calibrate runs/a", "calibrate needs a run directory written by servebench run --out")
	}
	opts := calib.Options{Bootstrap: f.bootstrap, Seed: f.seed, Slots: f.slots}
	c, against, err := loadCalibration(env, "", "servebench calibrate runs/a", calib.Sources{Dir: dir, Against: f.against, Only: only}, opts)
	if err != nil {
		return err
	}
	if err := f.shape.fitShared(c.Fit, opts); err != nil {
		return err
	}
	pts, err := c.Points(loads)
	if err != nil {
		return calibError(err, dir)
	}
	rep, err := c.Report(pts, against)
	if err != nil {
		return err
	}
	if f.json {
		return report.CalibrationJSON(env.Stdout, rep)
	}
	return report.WriteCalibration(env.Stdout, rep)
}

// loads parses the lists of loads and lengths to predict; an absent list
// is nil.
func (f *calibrateFlags) loads() (calib.Loads, error) {
	l := calib.Loads{Requests: f.requests, Warmup: f.warmup}
	for _, in := range []struct {
		name, s string
		dst     *[]int
	}{{"concurrency", f.conc, &l.Concurrency}, {"prompt-tokens", f.prompt, &l.PromptTokens}, {"output-tokens", f.output, &l.OutputTokens}} {
		if in.s == "" {
			continue
		}
		var err error
		if *in.dst, err = intList(in.name, in.s); err != nil {
			return l, err
		}
	}
	return l, nil
}

// defineFitConcurrency defines --fit-concurrency, for calibrate and sim
// --calibrate.
func defineFitConcurrency(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "fit-concurrency", "", "fit to the run's closed-loop points at these concurrencies only, e.g. 1,4 (default: every point)"+usage)
}

// parseConcSet parses --fit-concurrency ("" is nil).
func parseConcSet(s string) (calib.ConcSet, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	l, err := intList("fit-concurrency", s) // an empty item is an error
	if err != nil {
		return nil, err
	}
	return calib.NewConcSet(l), nil
}

// calibError gives calib's errors in what was asked of a run (named as
// the command names it) their hint and exit code.
func calibError(err error, name string) error {
	var in *calib.InputError
	switch {
	case errors.As(err, &in) && in.Kind == calib.ErrNotMeasured:
		return &Error{Err: err, Hint: "list concurrencies the run measured, e.g. --fit-concurrency " + in.FitExample, Code: ExitUsage}
	case errors.Is(err, calib.ErrNoneHeldOut):
		return usagef("servebench calibrate "+name+" --fit-concurrency 1,4 --against "+name, "%v", err)
	case errors.Is(err, calib.ErrNoPoint):
		return &Error{Err: err, Hint: "servebench run --concurrency 1,4 --out DIR", Code: ExitFailure}
	case errors.Is(err, calib.ErrTooFew):
		return &Error{Err: fmt.Errorf("%s: %w", name, err), Hint: "calibrate on a streamed run at concurrency 1 and a few users, e.g. servebench run --concurrency 1,4 --requests 16", Code: ExitFailure}
	}
	return err
}

// loadCalibration reads the runs of src and fits the model to src.Dir's
// (calib.Load). Errors name the run as the command does (by flagName, ""
// for a positional argument) and give example as the hint.
func loadCalibration(env *Env, flagName, example string, src calib.Sources, o calib.Options) (*calib.Calibration, *calib.HeldOut, error) {
	src.In, src.Read = env.Stdin, env.readOptions(false, sliceFlag{})
	c, against, err := calib.Load(src, o)
	if r, ok := errors.AsType[*calib.ReadError](err); ok {
		if r.Against {
			return nil, nil, runDirError("--against", src.Against, "servebench calibrate runs/a --against runs/b (each a directory written by servebench run --out)", readError(r.Err))
		}
		return nil, nil, runDirError(flagName, src.Dir, example+" (a directory written by servebench run --out)", readError(r.Err))
	}
	if err != nil {
		return nil, nil, calibError(err, strings.TrimSpace(flagName+" "+src.Dir))
	}
	return c, against, nil
}

// runDirError names the run directory (with the flag that named it, if
// one did) that could not be read, and gives the hint of that command:
// loadSummary's own is report's.
func runDirError(flagName, dir, hint string, err error) error {
	e := &Error{Err: err, Code: ExitFailure}
	errors.As(err, &e)
	return &Error{Err: fmt.Errorf("%s: %w", strings.TrimSpace(flagName+" "+dir), e.Err), Hint: hint, Code: e.Code}
}

// calibShape names the model and device a calibration is read against
// (--config or --gguf with one --gpu): the shared roofline model's terms.
type calibShape struct {
	config, gguf, gpu, devices, engine, weights, kv string
	tp                                              int
}

func (s *calibShape) bind(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", "Hugging Face config.json (or its `directory`): also read the fit as the shared model's efficiencies and overheads (with --gpu)")
	fs.StringVar(&s.gguf, "gguf", "", "GGUF model `file`, instead of --config")
	fs.StringVar(&s.gpu, "gpu", "", "the device `name` the run measured (with --config or --gguf)")
	fs.StringVar(&s.devices, "devices", "", "YAML `file` of extra devices (catalog format)")
	fs.StringVar(&s.engine, "engine", plan.EngineVLLM, "engine: "+strings.Join(plan.Engines(), ", "))
	fs.StringVar(&s.weights, "weights", "", "weight `format` (default: the checkpoint's)")
	fs.StringVar(&s.kv, "kv-dtype", "auto", "KV-cache `type`")
	fs.IntVar(&s.tp, "tp", 1, "tensor-parallel degree (vLLM); GPUs the layers are split over (llama.cpp, Ollama)")
}

// fitShared fits the shared roofline model of the model and device named
// to the run, into fit.Shared; nothing when none is named.
func (s *calibShape) fitShared(fit *calib.Fit, o calib.Options) error {
	if s.config == "" && s.gguf == "" {
		if s.gpu != "" {
			return usagef("servebench calibrate runs/a --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM", "--gpu needs --config or --gguf")
		}
		return nil
	}
	if s.gpu == "" || strings.Contains(s.gpu, ",") {
		return usagef("servebench calibrate runs/a --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM", "--config needs exactly one --gpu: the device the run measured")
	}
	setup := &plan.Setup{Model: cmp.Or(s.config, s.gguf), GGUF: s.gguf != "", DeviceFile: s.devices, Devices: []string{s.gpu},
		Options: plan.Options{Engine: s.engine, Weights: s.weights, KVType: s.kv, GPUs: s.tp, Eff: plan.DefaultEfficiency()}}
	err := fit.FitDevice(setup, o)
	if err == nil || errors.Is(err, calib.ErrTooFew) {
		return err
	}
	return planError(err)
}
