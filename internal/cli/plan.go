package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/report"
)

const planUsage = `
Usage: servebench plan (--config PATH | --gguf FILE) [flags]

Plans serving a model before a server exists: the memory each device needs
(weights, KV cache, activations, runtime, headroom), which devices of the
catalog fit and the longest context x most sequences each holds, and
roofline estimates of prefill, TTFT, decode speed and E2E, with the limit
that binds. With --compare RUN_DIR it predicts each load point of a run and
sets the measurement beside it. servebench calibrate RUN_DIR fits a
performance model to a measured run instead and predicts loads that were
not run. docs/PLANNER.md defines every field.

The model comes from a Hugging Face config.json (a file or its directory;
model.safetensors.index.json or safetensors headers beside it give exact
parameter counts) or from a GGUF file's header. The repository keeps a few
configs in internal/plan/testdata/models; go run ./cmd/mkgguf -o model.gguf
writes a small GGUF file.

Examples:
  servebench plan --config internal/plan/testdata/models/Llama-3.1-8B --prompt-tokens 4000 \
      --output-tokens 300 --concurrency 4 --ttft 1.5s --min-tps 20
  servebench plan --config internal/plan/testdata/models/Llama-3.1-70B --weights fp8 --tp 2 --gpu H100-SXM,H200
  servebench plan --gguf model.gguf --engine ollama --parallel 4 --context 4096 --json
  servebench run --concurrency 1,4 --out runs/sim
  servebench plan --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM --compare runs/sim
  servebench plan --list-devices
  servebench plan --devices docs/devices-ci-host.yaml --gguf model.gguf --engine ollama --gpu ci-host-1t
  servebench calibrate runs/sim --concurrency 2,8,16
`

type planFlags struct {
	config, gguf, gpus, compare string
	json, list                  bool
	dep                         servebench.Deployment
	eff                         servebench.PlanEfficiency
	plan.Workload
	ttft           time.Duration
	headroom, util float64
}

func (f *planFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "Hugging Face config.json, or the model `directory` holding it")
	fs.StringVar(&f.gguf, "gguf", "", "GGUF model `file` (header only is read)")
	fs.BoolVar(&f.dep.Approximate, "approximate", false, "read an unknown architecture as a dense decoder (with a warning)")
	fs.StringVar(&f.dep.Engine, "engine", plan.EngineVLLM, "engine (memory semantics and overheads): "+strings.Join(plan.Engines(), ", "))
	fs.StringVar(&f.dep.Weights, "weights", "", "weight `format` (bf16, fp16, fp8, int8, awq, gptq, q8_0, q4_k_m, ...; default: the checkpoint's)")
	fs.StringVar(&f.dep.KVCache, "kv-dtype", "auto", "KV-cache `type`: auto, fp16, bf16, fp8 (vLLM), q8_0, q4_0 (llama.cpp/Ollama)")
	fs.IntVar(&f.PromptTokens, "prompt-tokens", 1024, "prompt length in tokens")
	fs.IntVar(&f.OutputTokens, "output-tokens", 256, "completion length in tokens")
	fs.IntVar(&f.Concurrency, "concurrency", 1, "concurrent users (sequences)")
	fs.IntVar(&f.Context, "context", 0, "context per sequence to provision (0 = prompt + output)")
	fs.DurationVar(&f.ttft, "ttft", 0, "TTFT p95 target, e.g. 1.5s (0 = none)")
	fs.Float64Var(&f.MinTPS, "min-tps", 0, "decode tokens/s per user target (0 = none)")
	fs.IntVar(&f.dep.GPUs, "tp", 1, "tensor-parallel degree (vLLM); GPUs the layers are split over (llama.cpp, Ollama)")
	fs.IntVar(&f.dep.Parallel, "parallel", 0, "llama.cpp/Ollama slots, OLLAMA_NUM_PARALLEL (0 = --concurrency)")
	fs.StringVar(&f.gpus, "gpu", "", "comma-separated device `names` to plan for (default: the whole catalog)")
	fs.StringVar(&f.dep.DeviceFile, "devices", "", "YAML `file` of extra devices (catalog format; see --list-devices)")
	fs.Float64Var(&f.headroom, "headroom", 100*plan.DefaultHeadroom, "percent of usable memory kept free")
	fs.Float64Var(&f.util, "gpu-memory-utilization", 0, "vLLM's setting; sets --headroom to 100 x (1 - value)")
	def := servebench.DefaultPlanEfficiency()
	fs.Float64Var(&f.eff.Compute, "compute-efficiency", def.Compute, "achieved fraction of peak tensor FLOP/s in prefill (negative = the engine's default: 0.55; llama.cpp and Ollama on NVIDIA GPUs 0.44 of the FP16-accumulate rate)")
	fs.Float64Var(&f.eff.Bandwidth, "bandwidth-efficiency", def.Bandwidth, "achieved fraction of peak memory bandwidth (decode)")
	fs.Float64Var(&f.eff.Interconnect, "interconnect-efficiency", def.Interconnect, "achieved fraction of interconnect bandwidth (all-reduce)")
	fs.DurationVar(&f.eff.AllReduceLatency, "allreduce-latency", def.AllReduceLatency, "fixed cost of one all-reduce")
	fs.DurationVar(&f.eff.StepOverhead, "step-overhead", def.StepOverhead, "host time per forward pass (negative = the engine's default)")
	fs.DurationVar(&f.eff.RequestOverhead, "request-overhead", def.RequestOverhead, "time per request outside engine steps: API server, template, tokenization, first chunk (negative = the engine's default)")
	fs.BoolVar(&f.json, "json", false, "write JSON instead of text")
	fs.StringVar(&f.compare, "compare", "", "run `directory` (summary.json) to compare predictions with; needs one --gpu")
	fs.BoolVar(&f.list, "list-devices", false, "print the device catalog with each number's source, then exit")
}

func planCmd(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "plan", planUsage)
	var f planFlags
	f.bind(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("servebench plan --config PATH", "unexpected argument %q", fs.Arg(0))
	}
	if f.list {
		devs, err := plan.LoadCatalog(f.dep.DeviceFile)
		if err != nil {
			return planError(err)
		}
		return writeDevices(env.Stdout, devs, f.json)
	}
	if err := f.deployment(fs); err != nil {
		return err
	}
	if f.compare != "" {
		return f.runCompare(env)
	}
	f.TTFT = f.ttft.Seconds()
	res, err := servebench.Plan(f.dep, f.Workload)
	if err != nil {
		return planError(err)
	}
	if f.json {
		return report.PlanJSON(env.Stdout, res)
	}
	return report.Plan(env.Stdout, res)
}

// deployment completes f.dep from the flags that do not map onto it one
// to one: the model, the devices and the headroom.
func (f *planFlags) deployment(fs *flag.FlagSet) error {
	if (f.config == "") == (f.gguf == "") {
		return usagef("servebench plan --config internal/plan/testdata/models/Llama-3.1-8B (or --gguf model.gguf)", "give exactly one of --config and --gguf")
	}
	f.dep.Model, f.dep.ModelFormat = f.config, "hf"
	if f.gguf != "" {
		f.dep.Model, f.dep.ModelFormat = f.gguf, "gguf"
	}
	if f.gpus != "" {
		f.dep.Devices = strings.Split(f.gpus, ",")
	}
	h := f.headroom / 100
	if f.util != 0 {
		if flagSet(fs, "headroom") {
			return usagef("servebench plan --gpu-memory-utilization 0.9", "give --headroom or --gpu-memory-utilization, not both")
		}
		if f.util <= 0.1 || f.util > 1 {
			return usagef("servebench plan --gpu-memory-utilization 0.9", "--gpu-memory-utilization %v is outside (0.1, 1]", f.util)
		}
		h = 1 - f.util
	}
	if f.dep.GPUs < 1 || f.dep.Parallel < 0 {
		return usagef("servebench plan --tp 2", "--tp must be at least 1 and --parallel not negative")
	}
	if err := plan.CheckHeadroom(h); err != nil {
		return planError(err)
	}
	f.dep.Headroom = h
	if h == 0 {
		f.dep.Headroom = -1 // none: Deployment's zero is the default
	}
	f.dep.Efficiency = &f.eff
	return nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// planError gives the planner's errors (a model, a devices file or a
// device that cannot be had; a plan it refuses) their hints: the
// planner's own, else plan's.
func planError(err error) error {
	switch {
	case errors.As(err, new(hinter)):
		return hinted(err)
	case errors.As(err, new(*fs.PathError)):
		return err // a devices file that cannot be read
	case errors.Is(err, plan.ErrContext):
		return &Error{Err: err, Hint: "lower --context (or --prompt-tokens/--output-tokens) to the model's maximum; engines refuse or clamp longer contexts", Code: ExitUsage}
	}
	return &Error{Err: err, Hint: "servebench plan -h", Code: ExitUsage}
}

// runCompare sets a measured run beside the plan's predictions for its
// load points. The public package does not offer it: it would read a run
// a second way beside servebench.Open, in the planner's own summary.
func (f *planFlags) runCompare(env *Env) error {
	s := f.setup()
	c, err := s.CompareRun(f.compare, env.warn)
	switch {
	case errors.Is(err, plan.ErrOneDevice):
		return usagef("servebench plan --compare RUN_DIR --gpu H100-SXM", "--compare needs exactly one device (--gpu NAME)")
	case err != nil:
		return planError(err)
	case f.json:
		return report.PlanComparisonJSON(env.Stdout, c)
	}
	return report.PlanComparison(env.Stdout, c)
}

// setup is the plan the flags ask for in the planner's terms, once
// deployment has completed them: what --compare, and sweep's
// --plan-args, plan with.
func (f *planFlags) setup() plan.Setup {
	d := f.dep
	return plan.Setup{Model: d.Model, GGUF: f.gguf != "", Approximate: d.Approximate, DeviceFile: d.DeviceFile, Devices: d.Devices,
		Options: plan.Options{Engine: d.Engine, Weights: d.Weights, KVType: d.KVCache, GPUs: d.GPUs, Parallel: d.Parallel,
			Headroom: max(d.Headroom, 0), Eff: plan.Tuning(f.eff).Efficiency()}}
}

func writeDevices(w io.Writer, devs []plan.Device, asJSON bool) error {
	if asJSON {
		return report.DevicesJSON(w, devs)
	}
	return report.Devices(w, devs)
}
