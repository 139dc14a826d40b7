package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// sweepPlan is what this test reads of sweep.json's configs[].plan.
type sweepPlan struct {
	Name   string            `json:"name"`
	Params map[string]string `json:"params"`
	RunDir string            `json:"run_dir"`
	Plan   *struct {
		Device string `json:"device"`
		GPUs   int    `json:"gpus"`
		Memory *struct {
			PerGPUBytes int64 `json:"per_gpu_bytes"`
			Parts       struct {
				Weights int64 `json:"weights_bytes"`
			} `json:"parts"`
		} `json:"memory"`
		PeakMemory *struct {
			Bytes  float64 `json:"bytes"`
			Source string  `json:"measured_source"`
		} `json:"peak_memory"`
		DecodeTPS *float64 `json:"decode_tps_per_user"`
		Compare   any      `json:"compare"`
		Error     *string  `json:"error"`
	} `json:"plan"`
}

// TestSweepPlanBesideMeasured: the simulator swept at tp=1 and tp=2, each
// planned with its own --tp. Two GPUs hold half the weights each, and each
// configuration's comparison is the one plan --compare RUN_DIR --json
// gives for its run.
func TestSweepPlanBesideMeasured(t *testing.T) {
	model := filepath.Join("..", "..", "internal", "plan", "testdata", "models", "Llama-3.1-8B")
	dir := filepath.Join(t.TempDir(), "sweep")
	code, stdout, stderr := runEnv(t, nil, "sweep",
		"--serve", binary+" sim --addr 127.0.0.1:{port} --time-scale 5", "--param", "tp=1,2",
		"--plan-config", model, "--plan-args", "--gpu H100-SXM --tp {tp}",
		"--concurrency", "1,4", "--requests", "12", "--prompt-tokens", "64", "--output-tokens", "32",
		"--no-history", "--ready-timeout", "30s", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		PlanConfig string      `json:"plan_config"`
		Configs    []sweepPlan `json:"configs"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.PlanConfig != model {
		t.Errorf("plan_config %q, want %q", f.PlanConfig, model)
	}
	if len(f.Configs) != 2 {
		t.Fatalf("%d configurations, want 2", len(f.Configs))
	}
	weights := map[string]int64{}
	for _, c := range f.Configs {
		p := c.Plan
		if p == nil || p.Error != nil || p.Memory == nil || p.DecodeTPS == nil || p.PeakMemory == nil || p.Compare == nil {
			t.Fatalf("%s: plan %+v, want memory, speed, the measured peak and a comparison", c.Name, p)
		}
		if p.Device != "H100-SXM" || c.Params["tp"] != strconv.Itoa(p.GPUs) {
			t.Errorf("%s: planned on %d %s, want %s H100-SXM", c.Name, p.GPUs, p.Device, c.Params["tp"])
		}
		if p.PeakMemory.Source != "server_rss" || !(p.PeakMemory.Bytes > 0) {
			t.Errorf("%s: peak %+v, want the simulator's RSS", c.Name, p.PeakMemory)
		}
		weights[c.Params["tp"]] = p.Memory.Parts.Weights
		code, out, errs := run(t, "plan", "--config", model, "--gpu", "H100-SXM", "--tp", c.Params["tp"], "--compare", c.RunDir, "--json")
		if code != 0 {
			t.Fatalf("plan --compare: exit %d\n%s", code, errs)
		}
		var want any
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Compare, want) {
			t.Errorf("%s: sweep's comparison\n%v\nwant plan --compare's\n%v", c.Name, p.Compare, want)
		}
	}
	if weights["1"] == 0 || weights["2"] != weights["1"]/2 {
		t.Errorf("weights per GPU %v, want tp=2's half of tp=1's", weights)
	}
	if !strings.Contains(stdout, "Planned beside measured") {
		t.Errorf("stdout lacks the plan's table:\n%s", stdout)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "Planned beside measured") {
		t.Errorf("report.html lacks the plan's table (%v)", err)
	}
}
