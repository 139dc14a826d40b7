package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"slices"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/sim"
)

const simUsage = `
Usage: servebench sim [flags]

Serves a simulated continuous-batching LLM server: OpenAI /v1/chat/completions
and /v1/completions, vLLM /tokenize and /metrics, Ollama /api/chat and
/api/generate. Its timing comes from a vLLM-style scheduler and a roofline
model of the configured model and GPU (default: an 8B model in BF16 on an
H100-class GPU). It runs in real time unless --time-scale speeds it up:
then a client measures model time / time_scale, and so do the server's
metrics; every response says so in a Servebench-Time-Scale header, which
servebench run --url reads to report model time.

Settings come from the defaults, then --config FILE, then flags.

Examples:
  servebench sim                                # listen on 127.0.0.1:8000
  servebench sim --print-config > sim.yaml      # effective config and derived figures
  servebench sim --config sim.yaml --addr 127.0.0.1:9000
  servebench sim --time-scale 10                # 10x faster; servebench still reports model time
  servebench sim --max-num-seqs 256             # vLLM's slot count
  servebench sim --kv-tokens 8192 --max-model-len 4096 --preemption reject
  servebench sim --calibrate runs/c14 --max-num-seqs 8   # the fitted model of a measured run, 8 slots
`

// simFlag binds a flag to a Config field (named by its YAML path).
type simFlag struct {
	name, field, usage string
	ptr                func(*sim.Config) any
}

var simFlags = []simFlag{
	{"seed", "seed", "random seed (jitter, output lengths, text)", func(c *sim.Config) any { return &c.Seed }},
	{"time-scale", "time_scale", "run this many times faster than model time", func(c *sim.Config) any { return &c.TimeScale }},
	{"jitter", "jitter", "multiplicative step-time noise, ±fraction", func(c *sim.Config) any { return &c.Jitter }},
	{"wander", "wander", "slow wander of the engine's speed, sd as a fraction (0 = steady)", func(c *sim.Config) any { return &c.Wander }},
	{"wander-time", "wander_time", "the wander's correlation time, seconds", func(c *sim.Config) any { return &c.WanderTime }},
	{"max-num-seqs", "engine.max_num_seqs", "sequence slots", func(c *sim.Config) any { return &c.Engine.MaxNumSeqs }},
	{"max-batched-tokens", "engine.max_num_batched_tokens", "token budget per step", func(c *sim.Config) any { return &c.Engine.MaxNumBatchedTokens }},
	{"kv-tokens", "engine.kv_tokens", "KV cache capacity in tokens (0 = from device memory)", func(c *sim.Config) any { return &c.Engine.KVTokens }},
	{"block-size", "engine.block_size", "KV block size in tokens", func(c *sim.Config) any { return &c.Engine.BlockSize }},
	{"preemption", "engine.preemption", "when the KV cache runs out: recompute or reject", func(c *sim.Config) any { return &c.Engine.Preemption }},
	{"request-overhead-ms", "engine.request_overhead_ms", "per-request time before scheduling (API server, template, tokenization), ms", func(c *sim.Config) any { return &c.Engine.RequestOverheadMS }},
	{"eos-mean-tokens", "engine.eos_mean_tokens", "mean natural answer length without ignore_eos (0 = always max_tokens)", func(c *sim.Config) any { return &c.Engine.EOSMeanTokens }},
	{"model-name", "model.name", "served model name", func(c *sim.Config) any { return &c.Model.Name }},
	{"params", "model.params", "model parameters", func(c *sim.Config) any { return &c.Model.Params }},
	{"layers", "model.layers", "transformer layers", func(c *sim.Config) any { return &c.Model.Layers }},
	{"hidden", "model.hidden", "hidden size", func(c *sim.Config) any { return &c.Model.Hidden }},
	{"heads", "model.heads", "query heads (0 = hidden / head-dim)", func(c *sim.Config) any { return &c.Model.Heads }},
	{"kv-heads", "model.kv_heads", "KV heads", func(c *sim.Config) any { return &c.Model.KVHeads }},
	{"head-dim", "model.head_dim", "head dimension", func(c *sim.Config) any { return &c.Model.HeadDim }},
	{"intermediate", "model.intermediate", "MLP width (sizes vLLM's activation peak)", func(c *sim.Config) any { return &c.Model.Intermediate }},
	{"vocab", "model.vocab", "vocabulary size (embedding table; activation peak)", func(c *sim.Config) any { return &c.Model.Vocab }},
	{"tied-embeddings", "model.tied_embeddings", "the input embedding is the output head (read whole each step)", func(c *sim.Config) any { return &c.Model.TiedEmbeddings }},
	{"bytes-per-weight", "model.bytes_per_weight", "bytes per weight (2 = BF16)", func(c *sim.Config) any { return &c.Model.BytesPerWeight }},
	{"bytes-per-kv", "model.bytes_per_kv", "bytes per KV cache element", func(c *sim.Config) any { return &c.Model.BytesPerKV }},
	{"max-model-len", "model.max_model_len", "prompt + output token cap", func(c *sim.Config) any { return &c.Model.MaxModelLen }},
	{"peak-tflops", "device.peak_tflops", "device peak dense TFLOP/s", func(c *sim.Config) any { return &c.Device.PeakTFLOPS }},
	{"mem-bandwidth-gbs", "device.mem_bandwidth_gbs", "device memory bandwidth, GB/s", func(c *sim.Config) any { return &c.Device.MemBandwidthGBs }},
	{"compute-efficiency", "device.compute_efficiency", "achieved fraction of peak FLOP/s", func(c *sim.Config) any { return &c.Device.ComputeEfficiency }},
	{"bandwidth-efficiency", "device.bandwidth_efficiency", "achieved fraction of bandwidth", func(c *sim.Config) any { return &c.Device.BandwidthEfficiency }},
	{"memory-gib", "device.memory_gib", "device memory, GiB", func(c *sim.Config) any { return &c.Device.MemoryGiB }},
	{"memory-utilization", "device.memory_utilization", "fraction of memory for weights + KV cache", func(c *sim.Config) any { return &c.Device.MemoryUtilization }},
	{"step-overhead-ms", "device.step_overhead_ms", "fixed cost per engine step, ms", func(c *sim.Config) any { return &c.Device.StepOverheadMS }},
}

func runSim(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "sim", simUsage)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address (host:port; port 0 picks a free one)")
	file := fs.String("config", "", "YAML configuration `file` (see --print-config)")
	printCfg := fs.Bool("print-config", false, "print the effective configuration and derived figures as YAML, then exit")
	calibrate := fs.String("calibrate", "", "serve the step model fitted to this run `directory` (servebench calibrate) instead of the roofline")
	var fitConc string
	defineFitConcurrency(fs, &fitConc, "; with --calibrate")
	scratch := sim.ServeDefaultConfig() // shows defaults in -h; values are re-read in simConfig
	for _, f := range simFlags {
		bindInto(fs, f.name, f.ptr(&scratch), f.usage+" ("+f.field+")")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("servebench sim -h", "unexpected argument %q", fs.Arg(0))
	}
	cfg, scaleSet, err := simConfig(fs, *file)
	if err != nil {
		return err
	}
	if fitConc != "" && *calibrate == "" {
		return usagef("servebench sim --calibrate runs/a --fit-concurrency 1,4", "--fit-concurrency picks the points of the --calibrate run to fit to; give --calibrate RUN_DIR")
	}
	if *calibrate != "" {
		if cfg, err = calibratedSim(env, fs, cfg, *calibrate, fitConc); err != nil {
			return err
		}
	}
	if *printCfg {
		if scaleSet || flagSet(fs, "time-scale") {
			return cfg.WriteYAML(env.Stdout)
		}
		// Unchosen, the scale is the loader's: servebench run --sim-config
		// on this file then runs exactly as it does without one.
		return cfg.WriteYAMLScaleUnset(env.Stdout)
	}
	err = sim.Serve(ctx, cfg, *addr, env.Stderr)
	if errors.As(err, new(*sim.ListenError)) {
		return &Error{Err: err, Hint: "choose another --addr, e.g. 127.0.0.1:0 for a free port", Code: ExitFailure}
	}
	return err
}

// simConfig layers defaults, the config file and the flags that were set,
// and validates the result; scaleSet says whether the file set the time
// scale.
func simConfig(fs *flag.FlagSet, file string) (cfg sim.Config, scaleSet bool, err error) {
	cfg, scaleSet, err = sim.ServeConfigFile(file)
	if errors.As(err, new(*iofs.PathError)) {
		return cfg, false, &Error{Err: fmt.Errorf("reading --config: %w", err), Hint: "servebench sim --print-config > sim.yaml writes a starting file", Code: ExitUsage}
	}
	if err != nil {
		return cfg, false, simConfigError(fmt.Errorf("%s: %w", file, err), err)
	}
	for _, f := range setSimFlags(fs) {
		// Re-parse the flag's text into the layered config's field.
		tmp := flag.NewFlagSet("", flag.ContinueOnError)
		bindInto(tmp, f.name, f.ptr(&cfg), "")
		if err := tmp.Set(f.name, fs.Lookup(f.name).Value.String()); err != nil {
			return cfg, false, usagef("servebench sim -h", "%v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, false, simConfigError(err, err)
	}
	return cfg, scaleSet, nil
}

// setSimFlags are the flags of the table the command line set, in flag
// order.
func setSimFlags(fs *flag.FlagSet) []simFlag {
	var set []simFlag
	fs.Visit(func(fl *flag.Flag) {
		if i := slices.IndexFunc(simFlags, func(f simFlag) bool { return f.name == fl.Name }); i >= 0 {
			set = append(set, simFlags[i])
		}
	})
	return set
}

// bindInto defines flag name over the field at ptr.
func bindInto(fs *flag.FlagSet, name string, ptr any, usage string) {
	switch p := ptr.(type) {
	case *int:
		fs.IntVar(p, name, *p, usage)
	case *int64:
		fs.Int64Var(p, name, *p, usage)
	case *float64:
		fs.Float64Var(p, name, *p, usage)
	case *string:
		fs.StringVar(p, name, *p, usage)
	case *bool:
		fs.BoolVar(p, name, *p, usage)
	}
}

// simConfigError turns a configuration error into a usage error whose hint
// names the flag for the field at fault.
func simConfigError(shown, err error) error {
	hint := "servebench sim --print-config shows every field and its default"
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		for _, f := range simFlags {
			if f.field == fe.Field {
				hint = fmt.Sprintf("fix %s in the config file, or set --%s", f.field, f.name)
			}
		}
	}
	return &Error{Err: shown, Hint: hint, Code: ExitUsage}
}

// calibratedSim puts the model fitted to the run in dir into cfg
// (calib.ServeConfig), leaving the settings the flags set.
func calibratedSim(env *Env, fs *flag.FlagSet, cfg sim.Config, dir, fitConc string) (sim.Config, error) {
	only, err := parseConcSet(fitConc)
	if err != nil {
		return cfg, err
	}
	c, _, err := loadCalibration(env, "--calibrate", "servebench sim --calibrate runs/a", calib.Sources{Dir: dir, Only: only}, calib.Options{Bootstrap: 1})
	if err != nil {
		return cfg, err
	}
	set := setSimFlags(fs)
	cfg = c.ServeConfig(cfg, func(field string) bool {
		return slices.ContainsFunc(set, func(f simFlag) bool { return f.field == field })
	})
	if err := cfg.Validate(); err != nil {
		return cfg, simConfigError(err, err)
	}
	fmt.Fprintf(env.Stderr, "servebench sim: %s\n", c.ServeLine(dir, cfg))
	for _, w := range c.Fit.Warnings {
		env.warn(w)
	}
	return cfg, nil
}
