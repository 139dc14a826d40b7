package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// calibHidden is a simulator the calibrator is not told about: a 7B-class
// model on a slower device, its own step overhead and 12 slots. Its steps
// last ~25 ms of model time, 5 ms of wall time at scale 5: far above a
// busy machine's timer noise. Only max_num_seqs reaches the calibrator, as
// the simulator states it about itself in run.json.
const calibHidden = `time_scale: 5
seed: 11
model:
  name: hidden-7b
  params: 7.0e9
device:
  peak_tflops: 250
  mem_bandwidth_gbs: 800
  compute_efficiency: 0.45
  bandwidth_efficiency: 0.75
  step_overhead_ms: 2
engine:
  max_num_seqs: 12
`

// calibWorkload is the workload of both runs.
var calibWorkload = []string{"--prompt-tokens", "200", "--output-tokens", "32", "--warmup", "0"}

// calibFigures are a point's figures as plan --calibrate predicts them.
type calibFigures struct {
	Concurrency int     `json:"concurrency"`
	TTFT        float64 `json:"ttft_p50_ms"`
	Decode      float64 `json:"decode_tps_per_request"`
	Output      float64 `json:"output_tps"`
}

// calibMeasured runs the hidden simulator at the concurrencies and returns
// each point's measured figures.
func calibMeasured(t *testing.T, cfg, dir, conc, requests string) []calibFigures {
	t.Helper()
	args := append([]string{"run", "--sim-config", cfg, "--concurrency", conc, "--requests", requests, "--out", dir, "--json"}, calibWorkload...)
	code, stdout, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("run %s: exit %d\n%s", conc, code, stderr)
	}
	var sum struct {
		Points []struct {
			Load      struct{ Concurrency int } `json:"load"`
			TTFT      struct{ P50 float64 }     `json:"ttft_ms"`
			Decode    struct{ P50 float64 }     `json:"decode_tps_per_request"`
			OutputTPS float64                   `json:"output_tps"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary: %v", err)
	}
	var out []calibFigures
	for _, p := range sum.Points {
		out = append(out, calibFigures{p.Load.Concurrency, p.TTFT.P50, p.Decode.P50, p.OutputTPS})
	}
	return out
}

// TestCalibPredictsHiddenSimulator is the calibration goal on the
// simulator: fitted on a run at concurrency 1 and 4, plan --calibrate
// predicts concurrency 2, 8 and 16 of the same server within 10% for
// aggregate throughput and per-user decode speed and 25% for TTFT p50.
func TestCalibPredictsHiddenSimulator(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hidden.yaml")
	if err := os.WriteFile(cfg, []byte(calibHidden), 0o644); err != nil {
		t.Fatal(err)
	}
	fitDir := filepath.Join(dir, "c14")
	calibMeasured(t, cfg, fitDir, "1,4", "12")
	measured := calibMeasured(t, cfg, filepath.Join(dir, "c2816"), "2,8,16", "32")

	code, stdout, stderr := run(t, "plan", "--calibrate", fitDir, "--concurrency", "2,8,16", "--requests", "32", "--json")
	if code != 0 {
		t.Fatalf("plan --calibrate: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Fit struct {
			Slots       int    `json:"slots"`
			SlotsSource string `json:"slots_source"`
		} `json:"fit"`
		Predictions []calibFigures `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Predictions) != 3 {
		t.Fatalf("plan --calibrate --json: %v\n%s", err, stdout)
	}
	if rep.Fit.Slots != 12 || rep.Fit.SlotsSource != "server" {
		t.Errorf("slots %d from %q, want 12 from the server's description", rep.Fit.Slots, rep.Fit.SlotsSource)
	}
	var table strings.Builder
	for i, m := range measured {
		p := rep.Predictions[i]
		if p.Concurrency != m.Concurrency {
			t.Fatalf("prediction %d is for c=%d, measured c=%d", i, p.Concurrency, m.Concurrency)
		}
		for _, c := range []struct {
			name       string
			pred, meas float64
			goal       float64
		}{
			{"output tok/s", p.Output, m.Output, 0.10},
			{"decode tok/s/user", p.Decode, m.Decode, 0.10},
			{"TTFT p50", p.TTFT, m.TTFT, 0.25},
		} {
			e := c.pred/c.meas - 1
			fmt.Fprintf(&table, "c=%d\t%s\t%.1f\t%.1f\t%+.1f%%\n", m.Concurrency, c.name, c.meas, c.pred, 100*e)
			if !(math.Abs(e) <= c.goal) {
				t.Errorf("c=%d %s: predicted %.1f, measured %.1f (%+.1f%%, goal ±%.0f%%)", m.Concurrency, c.name, c.pred, c.meas, 100*e, 100*c.goal)
			}
		}
	}
	t.Logf("measured vs predicted:\n%s", table.String())
	calibServeFitted(t, fitDir, rep.Predictions[1])
}

// calibServeFitted serves the model fitted to fitDir (sim --calibrate) and
// runs the predicted point against it: through HTTP and the scheduler it
// measures what plan --calibrate predicted for it.
func calibServeFitted(t *testing.T, fitDir string, want calibFigures) {
	url := clockStartSim(t, "--calibrate", fitDir, "--time-scale", "5")
	dir := filepath.Join(t.TempDir(), "fitted")
	args := append([]string{"run", "--url", url, "--model", "hidden-7b", "--concurrency", itoa(want.Concurrency),
		"--requests", "32", "--out", dir, "--json"}, calibWorkload...)
	code, stdout, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("run against sim --calibrate: exit %d\n%s", code, stderr)
	}
	var sum struct {
		Points []struct {
			TTFT      struct{ P50 float64 } `json:"ttft_ms"`
			Decode    struct{ P50 float64 } `json:"decode_tps_per_request"`
			OutputTPS float64               `json:"output_tps"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Points) != 1 {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}
	p := sum.Points[0]
	for _, c := range []struct {
		name      string
		got, want float64
		tolerance float64
	}{
		{"output tok/s", p.OutputTPS, want.Output, 0.10},
		{"decode tok/s/user", p.Decode.P50, want.Decode, 0.10},
		{"TTFT p50", p.TTFT.P50, want.TTFT, 0.25},
	} {
		if e := c.got/c.want - 1; !(math.Abs(e) <= c.tolerance) {
			t.Errorf("sim --calibrate at c=%d: %s %.1f, plan --calibrate predicted %.1f (%+.1f%%)", want.Concurrency, c.name, c.got, c.want, 100*e)
		}
	}
}

func itoa(n int) string { return fmt.Sprint(n) }
