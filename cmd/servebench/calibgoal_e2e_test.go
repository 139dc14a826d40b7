package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
)

// calibHidden is a simulator the calibrator is not told about: a 7B-class
// model on a slower device, its own step and request overheads and 12
// slots. Its steps last ~24 ms, in real time: a busy machine's stall of a
// few ms moves a step, not a point. Only
// max_num_seqs reaches the calibrator, as the simulator states it about
// itself in run.json.
const calibHidden = `time_scale: 1
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
  request_overhead_ms: 30
`

// calibWorkload is the workload of both runs.
var calibWorkload = []string{"--prompt-tokens", "200", "--output-tokens", "32", "--warmup", "0"}

// calibFigures are a point's figures as servebench calibrate predicts them.
type calibFigures struct {
	Concurrency int     `json:"concurrency"`
	TTFT        float64 `json:"ttft_p50_ms"`
	Decode      float64 `json:"decode_tps_per_request"`
	Output      float64 `json:"output_tps"`
}

// calibMeasured runs the hidden simulator at the concurrencies.
//
// A run whose simulator fell behind its clock (the host starved it; the
// run says so, docs/METRICS.md) measured the host, not the model: it is
// run again, and a second such run skips the test with the run's words,
// rather than failing the prediction on figures known to be off.
func calibMeasured(t *testing.T, cfg, dir, conc, requests string) {
	t.Helper()
	for try := 1; ; try++ {
		os.RemoveAll(dir)
		args := append([]string{"run", "--sim-config", cfg, "--concurrency", conc, "--requests", requests, "--out", dir}, calibWorkload...)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", conc, code, stderr)
		}
		behind := simBehindWarning(t, dir)
		if behind == "" {
			return
		}
		if try == 2 {
			t.Skipf("run %s, twice: %s", conc, behind)
		}
		t.Logf("run %s again: %s", conc, behind)
	}
}

// simBehindWarning is a run directory's warning that its simulator fell
// behind its clock, "" when it has none.
func simBehindWarning(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Warnings []string }
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return simBehind(s.Warnings)
}

// simBehind is the run warning among ws that its simulator fell behind
// its clock, "" when there is none.
func simBehind(ws []string) string {
	for _, w := range ws {
		if strings.HasPrefix(w, metrics.SimBehindPrefix) {
			return w
		}
	}
	return ""
}

// TestCalibPredictsHiddenSimulator is the calibration goal on the
// simulator: fitted on a run at concurrency 1 and 4, servebench calibrate
// predicts a run at 2, 8 and 16 of the same server within 10% for
// aggregate throughput and per-user decode speed and 25% for TTFT p50.
func TestCalibPredictsHiddenSimulator(t *testing.T) {
	dir := t.TempDir()
	// Both runs go in real time: a stall of a few ms on a busy machine is
	// then a fraction of a step. At time scale 2 a disturbed fit run read
	// the decode step 15% slow and missed the goal at every held-out point
	// (the held-out run had gone in real time since; the fit's errors carry
	// into every prediction). The server is the same; figures are model time.
	cfg := filepath.Join(dir, "hidden.yaml")
	if err := os.WriteFile(cfg, []byte(calibHidden), 0o644); err != nil {
		t.Fatal(err)
	}
	fitDir, heldOut := filepath.Join(dir, "c14"), filepath.Join(dir, "c2816")
	// A run that a busy host slowed without the simulator falling behind
	// its clock (a client reading late) can move a figure by a few
	// percent: a fit run read slow carries into every prediction, a
	// held-out run read slow misses them. Both are measured once more, and
	// the test fails only when the prediction misses twice.
	var predicted calibFigures
	for try := 1; ; try++ {
		calibMeasured(t, cfg, fitDir, "1,4", "12")
		calibMeasured(t, cfg, heldOut, "2,8,16", "16")
		misses, table, p := calibJudge(t, fitDir, heldOut)
		t.Logf("measured vs predicted (try %d):\n%s", try, table)
		if len(misses) == 0 {
			predicted = p
			break
		}
		if try == 2 {
			for _, m := range misses {
				t.Error(m)
			}
			return
		}
		t.Logf("missed the goal, measuring both runs again: %s", strings.Join(misses, "; "))
	}
	calibServeFitted(t, fitDir, predicted)
}

// calibJudge runs servebench calibrate fitted to fitDir against heldOut
// and returns the figures that miss the goal, the table of measured
// against predicted, and the prediction at the held-out run's second
// concurrency.
func calibJudge(t *testing.T, fitDir, heldOut string) (misses []string, table string, predicted calibFigures) {
	t.Helper()
	code, stdout, stderr := run(t, "calibrate", fitDir, "--against", heldOut, "--json")
	if code != 0 {
		t.Fatalf("servebench calibrate: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Fit struct {
			Slots       int    `json:"slots"`
			SlotsSource string `json:"slots_source"`
		} `json:"fit"`
		Against []struct {
			Measured, Predicted calibFigures
		} `json:"against"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Against) != 3 {
		t.Fatalf("calibrate --against --json: %v\n%s", err, stdout)
	}
	if rep.Fit.Slots != 12 || rep.Fit.SlotsSource != "server" {
		t.Errorf("slots %d from %q, want 12 from the server's description", rep.Fit.Slots, rep.Fit.SlotsSource)
	}
	var b strings.Builder
	for _, a := range rep.Against {
		m, p := a.Measured, a.Predicted
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
			fmt.Fprintf(&b, "c=%d\t%s\t%.1f\t%.1f\t%+.1f%%\n", m.Concurrency, c.name, c.meas, c.pred, 100*e)
			if !(math.Abs(e) <= c.goal) {
				misses = append(misses, fmt.Sprintf("c=%d %s: predicted %.1f, measured %.1f (%+.1f%%, goal ±%.0f%%)", m.Concurrency, c.name, c.pred, c.meas, 100*e, 100*c.goal))
			}
		}
	}
	return misses, b.String(), rep.Against[1].Predicted
}

// calibServeFitted serves the model fitted to fitDir (sim --calibrate) and
// runs the predicted point against it: through HTTP and the scheduler it
// measures what servebench calibrate predicted for it. As with the
// held-out run, a miss is measured once more before it fails.
func calibServeFitted(t *testing.T, fitDir string, want calibFigures) {
	url := clockStartSim(t, "--calibrate", fitDir, "--time-scale", "2")
	for try := 1; ; try++ {
		misses := calibServed(t, url, want)
		if len(misses) == 0 {
			return
		}
		if try == 2 {
			for _, m := range misses {
				t.Error(m)
			}
			return
		}
		t.Logf("sim --calibrate missed the prediction, measuring again: %s", strings.Join(misses, "; "))
	}
}

// calibServed runs the predicted point against the fitted simulator at url
// and returns the figures that miss what servebench calibrate predicted.
func calibServed(t *testing.T, url string, want calibFigures) (misses []string) {
	t.Helper()
	args := append([]string{"run", "--url", url, "--model", "hidden-7b", "--concurrency", fmt.Sprint(want.Concurrency),
		"--requests", "24", "--json"}, calibWorkload...)
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
			misses = append(misses, fmt.Sprintf("sim --calibrate at c=%d: %s %.1f, servebench calibrate predicted %.1f (%+.1f%%)", want.Concurrency, c.name, c.got, c.want, 100*e))
		}
	}
	return misses
}
