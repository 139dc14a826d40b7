package servebench

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/plan"
)

// Deployment is what Plan plans for: a model, an engine and the devices
// to consider. Its zero fields are servebench plan's defaults.
type Deployment struct {
	// Model is a Hugging Face config.json (or the directory holding it;
	// safetensors headers beside it give exact parameter counts), or a
	// GGUF file, of which only the header is read.
	Model string
	// ModelFormat says how Model is read: "hf" (a config.json) or "gguf";
	// empty: gguf when Model ends in .gguf, else hf.
	ModelFormat string
	// Approximate reads a Hugging Face architecture the planner does not
	// know as a dense decoder, with a warning.
	Approximate bool
	// Engine is vllm, sglang, trtllm, nim, llamacpp or ollama
	// (empty: vllm); Weights the weight format (empty: the checkpoint's),
	// e.g. fp8, awq, q4_k_m.
	Engine, Weights string
	// KVCache is the KV-cache type: fp16, bf16, fp8 (vLLM), q8_0, q4_0
	// (llama.cpp, Ollama); empty: the engine's default for the model.
	KVCache string
	// GPUs is the tensor-parallel degree, or the GPUs llama.cpp and
	// Ollama split the layers over (0: 1).
	GPUs int
	// Parallel is llama.cpp's and Ollama's slot count
	// (OLLAMA_NUM_PARALLEL); 0: the workload's concurrency.
	Parallel int
	// Devices are names of the device catalog (servebench plan
	// --list-devices) to plan for; none: the whole catalog.
	Devices []string
	// DeviceFile is a YAML file of devices in the catalog's format
	// (servebench plan --list-devices --json), added to the catalog; one
	// of a catalog device's name replaces it.
	DeviceFile string
	// Headroom is the fraction of usable memory kept free, at most 0.9;
	// zero: 0.10, as vLLM's default gpu_memory_utilization of 0.9 keeps;
	// negative: none.
	Headroom float64
	// Efficiency is what the estimates assume the engine achieves; nil:
	// DefaultPlanEfficiency().
	Efficiency *PlanEfficiency
}

// PlanEfficiency holds the factors that turn peak rates into achieved
// ones, and the overheads beside them (docs/PLANNER.md).
type PlanEfficiency struct {
	// Compute, Bandwidth and Interconnect are the achieved fractions of
	// peak tensor FLOP/s (prefill), memory bandwidth (decode) and
	// interconnect bandwidth (all-reduce), each in (0, 1]; a negative
	// Compute is the engine's default.
	Compute, Bandwidth, Interconnect float64
	// AllReduceLatency is the fixed cost of one all-reduce; StepOverhead
	// host time per forward pass; RequestOverhead the time per request
	// outside engine steps (API server, template, tokenization, first
	// chunk). A negative StepOverhead or RequestOverhead is the engine's
	// default.
	AllReduceLatency, StepOverhead, RequestOverhead time.Duration
}

// DefaultPlanEfficiency returns the planner's assumptions: the engine's
// compute efficiency and overheads, 0.8 of peak bandwidth, 0.7 of the
// interconnect's and 20 µs per all-reduce.
func DefaultPlanEfficiency() PlanEfficiency { return PlanEfficiency(plan.DefaultTuning()) }

// PlanWorkload is what a plan must serve: prompt and output lengths,
// concurrent users, the context each is provisioned (0: prompt +
// output), and optional TTFT p95 (seconds) and per-user decode speed
// (tokens/s) targets.
type PlanWorkload = plan.Workload

// PlanResult is a plan: the model's memory needs and, per device, whether
// it fits, the context and sequences it holds, and roofline estimates of
// TTFT and decode speed with the limit that binds (docs/PLANNER.md).
type PlanResult = plan.Result

// Plan plans serving a model before a server exists, as servebench plan
// does.
func Plan(d Deployment, w PlanWorkload) (*PlanResult, error) {
	s, err := d.setup()
	if err != nil {
		return nil, err
	}
	return s.Plan(w)
}

// setup is d in the planner's terms, its defaults filled.
func (d Deployment) setup() (*plan.Setup, error) {
	gguf := strings.HasSuffix(d.Model, ".gguf")
	switch d.ModelFormat {
	case "":
	case "hf", "gguf":
		gguf = d.ModelFormat == "gguf"
	default:
		return nil, fmt.Errorf("servebench: model format %q: give hf or gguf", d.ModelFormat)
	}
	eff := plan.DefaultEfficiency()
	if d.Efficiency != nil {
		eff = plan.Tuning(*d.Efficiency).Efficiency()
	}
	headroom := d.Headroom
	switch {
	case headroom == 0:
		headroom = plan.DefaultHeadroom
	case headroom < 0:
		headroom = 0
	}
	return &plan.Setup{Model: d.Model, GGUF: gguf, Approximate: d.Approximate, DeviceFile: d.DeviceFile, Devices: d.Devices,
		Options: plan.Options{Engine: cmp.Or(d.Engine, plan.EngineVLLM), Weights: d.Weights, KVType: cmp.Or(d.KVCache, "auto"),
			GPUs: max(d.GPUs, 1), Parallel: d.Parallel, Headroom: headroom, Eff: eff}}, nil
}
