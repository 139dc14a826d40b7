package servebench_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/plan"
)

// TestPlanDeployment: each Deployment field reaches the planner as
// servebench plan's flag for it does, and a zero field is the flag's
// default.
func TestPlanDeployment(t *testing.T) {
	llama := "internal/plan/testdata/models/Llama-3.1-8B"
	devs := filepath.Join(t.TempDir(), "devs.yaml")
	os.WriteFile(devs, []byte("devices:\n  - name: my-gpu\n    memory_gib: 48\n    bandwidth_gbs: 900\n    bf16_tflops: 150\n"), 0o644)
	w := servebench.PlanWorkload{PromptTokens: 2000, OutputTokens: 200, Concurrency: 8}
	defaults := plan.Options{Engine: plan.EngineVLLM, KVType: "auto", GPUs: 1, Headroom: plan.DefaultHeadroom, Eff: plan.DefaultEfficiency()}
	tuned := servebench.DefaultPlanEfficiency()
	tuned.Bandwidth, tuned.StepOverhead = 0.6, 3*time.Millisecond
	tests := []struct {
		name string
		d    servebench.Deployment
		want plan.Setup
	}{
		// The zero fields are the command's defaults.
		{"defaults", servebench.Deployment{Model: llama, Devices: []string{"H100-SXM"}},
			plan.Setup{Model: llama, Devices: []string{"H100-SXM"}, Options: defaults}},
		// A negative headroom keeps nothing free.
		{"no headroom", servebench.Deployment{Model: llama, Devices: []string{"L40S"}, Headroom: -1},
			plan.Setup{Model: llama, Devices: []string{"L40S"}, Options: with(defaults, func(o *plan.Options) { o.Headroom = 0 })}},
		{"engine and formats", servebench.Deployment{Model: llama, Engine: "ollama", Weights: "q4_k_m", KVCache: "q8_0", GPUs: 2, Parallel: 3, Headroom: 0.2},
			plan.Setup{Model: llama, Options: with(defaults, func(o *plan.Options) {
				o.Engine, o.Weights, o.KVType, o.GPUs, o.Parallel, o.Headroom = "ollama", "q4_k_m", "q8_0", 2, 3, 0.2
			})}},
		{"efficiency", servebench.Deployment{Model: llama, Devices: []string{"H200"}, Efficiency: &tuned},
			plan.Setup{Model: llama, Devices: []string{"H200"}, Options: with(defaults, func(o *plan.Options) {
				o.Eff.Bandwidth, o.Eff.StepOverhead = 0.6, 3e-3
			})}},
		{"devices file", servebench.Deployment{Model: llama, DeviceFile: devs, Devices: []string{"my-gpu"}},
			plan.Setup{Model: llama, DeviceFile: devs, Devices: []string{"my-gpu"}, Options: defaults}},
	}
	for _, tt := range tests {
		got, err := servebench.Plan(tt.d, w)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		want, err := tt.want.Plan(w)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the Deployment plans otherwise than the command's flags\ngot  %+v\nwant %+v", tt.name, got, want)
		}
	}
}

func with(o plan.Options, change func(*plan.Options)) plan.Options {
	change(&o)
	return o
}

// TestPlanModelFormat: a config is read as GGUF only when asked or named
// *.gguf, and a format Plan does not know is refused.
func TestPlanModelFormat(t *testing.T) {
	config := "internal/plan/testdata/models/Llama-3.1-8B/config.json"
	w := servebench.PlanWorkload{PromptTokens: 100, OutputTokens: 10, Concurrency: 1}
	if _, err := servebench.Plan(servebench.Deployment{Model: config, Devices: []string{"L4"}}, w); err != nil {
		t.Errorf("a config.json: %v", err)
	}
	_, err := servebench.Plan(servebench.Deployment{Model: config, ModelFormat: "gguf"}, w)
	if m, ok := errors.AsType[*plan.ModelError](err); !ok || !m.GGUF {
		t.Errorf("a config.json read as GGUF: %v, want the GGUF reader's error", err)
	}
	if _, err := servebench.Plan(servebench.Deployment{Model: config, ModelFormat: "onnx"}, w); err == nil {
		t.Error("format onnx: no error")
	}
}
