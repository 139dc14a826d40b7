package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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
	config, gguf, engine, weights, kv, gpus, devices, compare string
	approximate, json, list                                   bool
	plan.Workload
	ttft                              time.Duration
	tp, parallel                      int
	headroom, util                    float64
	computeEff, bandwidthEff, linkEff float64
	allReduce, overhead, reqOverhead  time.Duration
}

func (f *planFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "Hugging Face config.json, or the model `directory` holding it")
	fs.StringVar(&f.gguf, "gguf", "", "GGUF model `file` (header only is read)")
	fs.BoolVar(&f.approximate, "approximate", false, "read an unknown architecture as a dense decoder (with a warning)")
	fs.StringVar(&f.engine, "engine", plan.EngineVLLM, "engine (memory semantics and overheads): "+strings.Join(plan.Engines(), ", "))
	fs.StringVar(&f.weights, "weights", "", "weight `format` (bf16, fp16, fp8, int8, awq, gptq, q8_0, q4_k_m, ...; default: the checkpoint's)")
	fs.StringVar(&f.kv, "kv-dtype", "auto", "KV-cache `type`: auto, fp16, bf16, fp8 (vLLM), q8_0, q4_0 (llama.cpp/Ollama)")
	fs.IntVar(&f.PromptTokens, "prompt-tokens", 1024, "prompt length in tokens")
	fs.IntVar(&f.OutputTokens, "output-tokens", 256, "completion length in tokens")
	fs.IntVar(&f.Concurrency, "concurrency", 1, "concurrent users (sequences)")
	fs.IntVar(&f.Context, "context", 0, "context per sequence to provision (0 = prompt + output)")
	fs.DurationVar(&f.ttft, "ttft", 0, "TTFT p95 target, e.g. 1.5s (0 = none)")
	fs.Float64Var(&f.MinTPS, "min-tps", 0, "decode tokens/s per user target (0 = none)")
	fs.IntVar(&f.tp, "tp", 1, "tensor-parallel degree (vLLM); GPUs the layers are split over (llama.cpp, Ollama)")
	fs.IntVar(&f.parallel, "parallel", 0, "llama.cpp/Ollama slots, OLLAMA_NUM_PARALLEL (0 = --concurrency)")
	fs.StringVar(&f.gpus, "gpu", "", "comma-separated device `names` to plan for (default: the whole catalog)")
	fs.StringVar(&f.devices, "devices", "", "YAML `file` of extra devices (catalog format; see --list-devices)")
	fs.Float64Var(&f.headroom, "headroom", 100*plan.DefaultHeadroom, "percent of usable memory kept free")
	fs.Float64Var(&f.util, "gpu-memory-utilization", 0, "vLLM's setting; sets --headroom to 100 x (1 - value)")
	def := plan.DefaultEfficiency()
	fs.Float64Var(&f.computeEff, "compute-efficiency", def.Compute, "achieved fraction of peak tensor FLOP/s in prefill (negative = the engine's default: 0.55; llama.cpp and Ollama on NVIDIA GPUs 0.44 of the FP16-accumulate rate)")
	fs.Float64Var(&f.bandwidthEff, "bandwidth-efficiency", def.Bandwidth, "achieved fraction of peak memory bandwidth (decode)")
	fs.Float64Var(&f.linkEff, "interconnect-efficiency", def.Interconnect, "achieved fraction of interconnect bandwidth (all-reduce)")
	fs.DurationVar(&f.allReduce, "allreduce-latency", time.Duration(def.AllReduceLatency*float64(time.Second)), "fixed cost of one all-reduce")
	fs.DurationVar(&f.overhead, "step-overhead", -1, "host time per forward pass (negative = the engine's default)")
	fs.DurationVar(&f.reqOverhead, "request-overhead", -1, "time per request outside engine steps: API server, template, tokenization, first chunk (negative = the engine's default)")
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
	devs, err := f.loadDevices()
	if err != nil {
		return err
	}
	if f.list {
		return writeDevices(env.Stdout, devs, f.json)
	}
	shape, err := f.loadModel()
	if err != nil {
		return err
	}
	opts, err := f.options(fs)
	if err != nil {
		return err
	}
	if devs, err = selectDevices(devs, f.gpus); err != nil {
		return err
	}
	if f.compare != "" {
		return f.runCompare(env, shape, opts, devs)
	}
	f.TTFT = f.ttft.Seconds()
	res, err := plan.Plan(shape, f.Workload, opts, devs)
	if err != nil {
		return planError(err)
	}
	if f.json {
		return report.PlanJSON(env.Stdout, res)
	}
	return report.Plan(env.Stdout, res)
}

func (f *planFlags) loadModel() (*plan.Shape, error) {
	switch {
	case (f.config == "") == (f.gguf == ""):
		return nil, usagef("servebench plan --config internal/plan/testdata/models/Llama-3.1-8B (or --gguf model.gguf)", "give exactly one of --config and --gguf")
	case f.gguf != "":
		s, err := plan.LoadGGUF(f.gguf)
		if err != nil {
			return nil, &Error{Err: err, Hint: "--gguf takes a GGUF model file; only its header is read", Code: ExitFailure}
		}
		return s, nil
	}
	s, err := plan.LoadHFModel(f.config, f.approximate)
	if err != nil {
		hint := "--config takes a Hugging Face config.json or the directory holding it"
		if strings.Contains(err.Error(), "unsupported architecture") {
			hint = "servebench plan --approximate ... reads it as a dense decoder"
		}
		return nil, &Error{Err: err, Hint: hint, Code: ExitFailure}
	}
	return s, nil
}

func (f *planFlags) options(fs *flag.FlagSet) (plan.Options, error) {
	eff := plan.Efficiency{Compute: f.computeEff, Bandwidth: f.bandwidthEff, Interconnect: f.linkEff,
		AllReduceLatency: f.allReduce.Seconds(), StepOverhead: f.overhead.Seconds(), RequestOverhead: f.reqOverhead.Seconds()}
	o := plan.Options{Engine: f.engine, Weights: f.weights, KVType: f.kv, GPUs: f.tp, Parallel: f.parallel,
		Headroom: f.headroom / 100, Eff: eff}
	if f.util != 0 {
		if flagSet(fs, "headroom") {
			return o, usagef("servebench plan --gpu-memory-utilization 0.9", "give --headroom or --gpu-memory-utilization, not both")
		}
		if f.util <= 0.1 || f.util > 1 {
			return o, usagef("servebench plan --gpu-memory-utilization 0.9", "--gpu-memory-utilization %v is outside (0.1, 1]", f.util)
		}
		o.Headroom = 1 - f.util
	}
	if f.tp < 1 || f.parallel < 0 {
		return o, usagef("servebench plan --tp 2", "--tp must be at least 1 and --parallel not negative")
	}
	return o, nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (f *planFlags) loadDevices() ([]plan.Device, error) {
	devs := plan.Catalog()
	if f.devices == "" {
		return devs, nil
	}
	data, err := os.ReadFile(f.devices)
	if err != nil {
		return nil, err
	}
	if devs, err = plan.WithDevices(devs, data); err != nil {
		return nil, &Error{Err: fmt.Errorf("%s: %w", f.devices, err), Hint: "servebench plan --list-devices --json shows the format", Code: ExitUsage}
	}
	return devs, nil
}

func selectDevices(devs []plan.Device, names string) ([]plan.Device, error) {
	out, err := plan.SelectDevices(devs, names)
	if u, ok := errors.AsType[*plan.UnknownDeviceError](err); ok {
		return nil, usagef("servebench plan --gpu "+u.Known[0], "%v", err)
	}
	return out, err
}

// planError turns the planner's input errors into usage errors with hints.
func planError(err error) error {
	if errors.Is(err, plan.ErrContext) {
		return &Error{Err: err, Hint: "lower --context (or --prompt-tokens/--output-tokens) to the model's maximum; engines refuse or clamp longer contexts", Code: ExitUsage}
	}
	return &Error{Err: err, Hint: "servebench plan -h", Code: ExitUsage}
}

func (f *planFlags) runCompare(env *Env, s *plan.Shape, o plan.Options, devs []plan.Device) error {
	if len(devs) != 1 {
		return usagef("servebench plan --compare RUN_DIR --gpu H100-SXM", "--compare needs exactly one device (--gpu NAME)")
	}
	sum, err := plan.ReadSummary(f.compare, env.warn)
	if err != nil {
		return &Error{Err: err, Hint: "--compare takes a run directory written by servebench run (summary.json)", Code: ExitFailure}
	}
	c, err := plan.Compare(s, o, &devs[0], sum)
	if err != nil {
		return planError(err)
	}
	if f.json {
		return report.PlanComparisonJSON(env.Stdout, c)
	}
	return report.PlanComparison(env.Stdout, c)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeDevices(w io.Writer, devs []plan.Device, asJSON bool) error {
	if asJSON {
		return writeJSON(w, map[string]any{"devices": devs})
	}
	return report.Devices(w, devs)
}
