package sweep

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
)

const testModel = "../plan/testdata/models/Llama-3.1-8B"

func planSpec(tp int, w plan.Workload) *PlanSpec {
	return &PlanSpec{Setup: plan.Setup{Model: testModel, Devices: []string{"H100-SXM"},
		Options: plan.Options{Engine: plan.EngineVLLM, KVType: "auto", GPUs: tp, Headroom: plan.DefaultHeadroom, Eff: plan.DefaultEfficiency()}},
		Workload: w}
}

func TestPlanWorkload(t *testing.T) {
	base := plan.Workload{PromptTokens: 1024, OutputTokens: 256, Concurrency: 1, Context: 4096}
	fixed := func(n float64) workload.LengthDist { return workload.LengthDist{Kind: "fixed", A: n} }
	pts := func(ls ...record.Load) []load.Point {
		var out []load.Point
		for _, l := range ls {
			out = append(out, load.Point{Load: l})
		}
		return out
	}
	for _, c := range []struct {
		name string
		pts  []load.Point
		want plan.Workload
		warn string
	}{
		// the sweep's lengths at its highest concurrency; base's context kept
		{"closed loops", pts(record.Load{Concurrency: 1}, record.Load{Concurrency: 16}, record.Load{Concurrency: 4}),
			plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 16, Context: 4096}, ""},
		// an open loop holds at most its cap
		{"capped rates", pts(record.Load{Rate: 2, MaxConcurrency: 32}),
			plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 32, Context: 4096}, ""},
		// uncapped rates: one user, said
		{"rates", pts(record.Load{Rate: 2}), plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 1, Context: 4096}, "memory planned for one user"},
		// no load (--startup-only): plan's defaults
		{"no load", nil, base, "plan's default workload"},
	} {
		got, warns := PlanWorkload(base, fixed(512), fixed(128), c.pts)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if w := strings.Join(warns, "\n"); c.warn == "" && w != "" || !strings.Contains(w, c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.name, warns, c.warn)
		}
	}
}

// TestPlanOfTensorParallel: two GPUs hold half the weights each, and the
// measured GPU peak is set over the need of both.
func TestPlanOfTensorParallel(t *testing.T) {
	w := plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 4}
	one := PlanOf(planSpec(1, w), &Config{})
	two := PlanOf(planSpec(2, w), &Config{PeakGPUMemoryBytes: f(40e9)})
	for _, p := range []*Plan{one, two} {
		if p.Error != nil || p.Memory == nil || p.DecodeTPS == nil || !(*p.DecodeTPS > 0) {
			t.Fatalf("plan %+v, want memory and speed", p)
		}
	}
	if got, want := two.Memory.Parts.Weights, one.Memory.Parts.Weights/2; got != want || two.GPUs != 2 || two.Device != "H100-SXM" {
		t.Errorf("tp 2: weights per GPU %d on %d GPUs of %s, want %d on 2 H100-SXM", got, two.GPUs, two.Device, want)
	}
	m := two.PeakMemory
	if m == nil || m.Source != MemoryGPU || m.Ratio == nil || *m.Ratio != 40e9/(2*float64(two.Memory.PerGPUBytes)) {
		t.Errorf("peak %+v, want GPU memory over two GPUs' need", m)
	}
	if one.PeakMemory != nil || one.Compare != nil {
		t.Errorf("no run: peak %+v, comparison %+v, want none", one.PeakMemory, one.Compare)
	}
}

// TestPlanOfFailed: a plan that cannot be made is the plan's error; the
// sweep's configuration is otherwise whole.
func TestPlanOfFailed(t *testing.T) {
	p := PlanOf(planSpec(1, plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 1, Context: 1 << 22}), &Config{})
	if p.Error == nil || !strings.Contains(*p.Error, "context") || p.Memory != nil {
		t.Errorf("plan %+v, want a context error and no memory", p)
	}
}

// TestPlanOfCompare: the run is compared as plan --compare compares it,
// and the decode speed beside the plan's is the one at capacity.
func TestPlanOfCompare(t *testing.T) {
	dir := t.TempDir()
	sum := `{"schema":"servebench.summary/v1","points":[
 {"load":{"concurrency":1},"requests":{"completed":50},"ttft_ms":{"mean":60,"p50":60,"p95":70},"tpot_ms":{"mean":8},"e2e_ms":{"mean":1100,"p50":1100},
  "decode_tps_per_request":{"p50":125},"output_tps":120,"prompt_tokens_mean":512,"output_tokens_mean":128},
 {"load":{"concurrency":4},"requests":{"completed":50},"ttft_ms":{"mean":70,"p50":70,"p95":90},"tpot_ms":{"mean":9},"e2e_ms":{"mean":1200,"p50":1200},
  "decode_tps_per_request":{"p50":110},"output_tps":430,"prompt_tokens_mean":512,"output_tokens_mean":128}]}`
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	s := planSpec(1, plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 4})
	c4 := record.Load{Concurrency: 4}
	c := &Config{RunDir: dir, PeakServerRSSBytes: f(3e8), Points: []Point{{Load: record.Load{Concurrency: 1}}, {Load: c4}},
		DecodeAtCapacity: &SpeedAt{Load: c4}}
	p := PlanOf(s, c)
	want, err := s.Setup.CompareRun(dir, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if p.Error != nil || !reflect.DeepEqual(p.Compare, want) {
		t.Fatalf("comparison %+v (error %v), want plan's %+v", p.Compare, p.Error, want)
	}
	if d := p.DecodeAt; d == nil || d.Load != c4 || d.DecodeTPS != want.Points[1].DecodeTPS || d.DecodeTPS.Measured != 110 {
		t.Errorf("decode at %+v, want c=4's pair %+v", d, want.Points[1].DecodeTPS)
	}
	if m := p.PeakMemory; m == nil || m.Source != MemoryServerRSS || m.Bytes != 3e8 || m.Ratio != nil {
		t.Errorf("peak %+v, want the server's RSS, no ratio", m)
	}
}
