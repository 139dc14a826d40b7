package perfmodel_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/sim"
)

// TestPlannerAndSimulatorAgree checks that an idle simulator and the plan
// of the same model, device and engine give the same figures: they build
// the same performance model, so the figures are equal up to rounding,
// and a simulated lone request takes what the plan says.
func TestPlannerAndSimulatorAgree(t *testing.T) {
	s, err := plan.LoadHFModel(filepath.Join("..", "plan", "testdata", "models", "Llama-3.1-8B"), false)
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := plan.FindDevice(plan.Catalog(), "H100-SXM")
	const prompt, output = 512, 64
	o := plan.Options{Engine: plan.EngineVLLM, Headroom: plan.DefaultHeadroom, Eff: plan.DefaultEfficiency()}
	res, err := plan.Plan(s, plan.Workload{PromptTokens: prompt, OutputTokens: output, Concurrency: 1}, o, []plan.Device{*dev})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Devices[0]
	cfg := sim.DefaultConfig()
	cfg.Jitter = 0
	ctx := prompt + output/2
	checks := []struct {
		name       string
		plan, simv float64
	}{
		{"batch-1 decode tok/s", p.Perf.DecodeTPS, 1 / cfg.DecodeStepTime(1, ctx).Seconds()},
		{"idle TTFT s", p.Perf.TTFTP50S, cfg.IdleTTFT(prompt).Seconds()},
		{"prefill s", p.Perf.PrefillS, cfg.PrefillTime(prompt).Seconds()},
		{"KV capacity tokens", float64(p.KVPool), float64(cfg.Derived().KVCapacityTokens)},
	}
	for _, c := range checks {
		// The plan rounds to 6 significant digits.
		if math.Abs(c.plan/c.simv-1) > 1e-5 {
			t.Errorf("%s: plan %g, simulator %g", c.name, c.plan, c.simv)
		}
	}
	// The simulator's engine, run on one request, takes the same times.
	out, _, err := sim.Simulate(cfg, []sim.Request{{PromptTokens: prompt, OutputTokens: output}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].TTFT.Seconds(); math.Abs(got/p.Perf.TTFTP50S-1) > 1e-5 {
		t.Errorf("simulated TTFT %g s, plan %g s", got, p.Perf.TTFTP50S)
	}
	if got := (out[0].E2E - out[0].TTFT).Seconds() / (output - 1); math.Abs(got/p.Perf.TPOTS-1) > 0.01 {
		t.Errorf("simulated time per output token %g s, plan %g s", got, p.Perf.TPOTS)
	}
}
