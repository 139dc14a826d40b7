package servebench

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/plan"
)

// Deployment is what Plan plans for: a model, an engine and the devices
// to consider.
type Deployment struct {
	// Model is a Hugging Face config.json (or the directory holding it;
	// safetensors headers beside it give exact parameter counts), or a
	// GGUF file (*.gguf), of which only the header is read.
	Model string
	// Engine is vllm, llama.cpp or ollama (empty: vllm); Weights the
	// weight format (empty: the checkpoint's), e.g. fp8, awq, q4_k_m.
	Engine, Weights string
	// GPUs is the tensor-parallel degree, or the GPUs llama.cpp and
	// Ollama split the layers over (0: 1).
	GPUs int
	// Devices are names of the device catalog (servebench plan
	// --list-devices) to plan for; none: the whole catalog.
	Devices []string
}

// PlanWorkload is what a plan must serve: prompt and output lengths,
// concurrent users, and optional TTFT p95 (seconds) and per-user decode
// speed (tokens/s) targets.
type PlanWorkload = plan.Workload

// PlanResult is a plan: the model's memory needs and, per device, whether
// it fits, the context and sequences it holds, and roofline estimates of
// TTFT and decode speed with the limit that binds (docs/PLANNER.md).
type PlanResult = plan.Result

// Plan plans serving a model before a server exists, as servebench plan
// does with its defaults for everything Deployment does not set.
func Plan(d Deployment, w PlanWorkload) (*PlanResult, error) {
	var s *plan.Shape
	var err error
	if strings.HasSuffix(d.Model, ".gguf") {
		s, err = plan.LoadGGUF(d.Model)
	} else {
		s, err = plan.LoadHFModel(d.Model, false)
	}
	if err != nil {
		return nil, err
	}
	devs := plan.Catalog()
	if len(d.Devices) > 0 {
		var chosen []plan.Device
		for _, name := range d.Devices {
			dev, ok := plan.FindDevice(devs, name)
			if !ok {
				return nil, fmt.Errorf("servebench: no device %q in the catalog", name)
			}
			chosen = append(chosen, *dev)
		}
		devs = chosen
	}
	o := plan.Options{Engine: d.Engine, Weights: d.Weights, KVType: "auto", GPUs: max(d.GPUs, 1),
		Headroom: plan.DefaultHeadroom, Eff: plan.DefaultEfficiency()}
	if o.Engine == "" {
		o.Engine = plan.EngineVLLM
	}
	return plan.Plan(s, w, o, devs)
}
