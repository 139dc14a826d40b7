package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCalibrateWander: a run of a simulator whose speed wanders is read
// as wandering (calibrate, text and JSON), and sim --calibrate
// serves the fitted step jitter and wander unless its flags set them.
func TestCalibrateWander(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(cfg, []byte("time_scale: 1\njitter: 0.05\nwander: 0.15\nwander_time: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runKeepingClock(t, "run", "--sim-config", cfg, "--concurrency", "1,4", "--requests", "32", "--warmup", "0",
		"--prompt-tokens", "64", "--output-tokens", "64", "--out", dir)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, out, stderr := runMain(t, "calibrate", dir, "--bootstrap", "20", "--json")
	if code != 0 {
		t.Fatalf("calibrate: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Fit struct {
			Wander *struct {
				SD      float64 `json:"sd"`
				TimeS   float64 `json:"time_s"`
				Windows int     `json:"windows"`
			} `json:"wander"`
			Residuals struct {
				MeanMS   float64 `json:"mean_gap_ms"`
				SpreadMS float64 `json:"spread_ms"`
			} `json:"residuals"`
		} `json:"fit"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The estimate's accuracy is TestEstimateWander's, on a scripted
	// engine's exact clock: this run is the simulator in real time, not
	// sped up, since at 10 times a busy host's 50 ms stall is 70 decode
	// steps and buried the wander in jitter (both copies of the suite run
	// side by side found none).
	w := rep.Fit.Wander
	if w == nil || !(w.SD > 0.05) || !(w.TimeS > 0) || w.Windows < 30 {
		t.Fatalf("fit.wander %+v, want a wander (0.15 over 0.5 s)", w)
	}
	if _, text, _ := runMain(t, "calibrate", dir, "--bootstrap", "20"); !strings.Contains(text, "Speed over the run: wanders by") {
		t.Errorf("text lacks the wander:\n%s", text)
	}
	// the residuals' spread less the wander's share (calib.Fit.SimConfig)
	rel := rep.Fit.Residuals.SpreadMS / rep.Fit.Residuals.MeanMS
	jitter := math.Min(0.3, math.Sqrt(3)*math.Sqrt(math.Max(0, rel*rel-w.SD*w.SD)))
	served := func(args ...string) (j, wd, wt float64) {
		t.Helper()
		code, y, stderr := runMain(t, append([]string{"sim", "--calibrate", dir, "--print-config"}, args...)...)
		if code != 0 {
			t.Fatalf("sim --calibrate %q: exit %d\n%s", args, code, stderr)
		}
		var c struct {
			Jitter     float64 `json:"jitter"`
			Wander     float64 `json:"wander"`
			WanderTime float64 `json:"wander_time"`
		}
		if err := yaml.Unmarshal([]byte(y), &c); err != nil {
			t.Fatalf("%v\n%s", err, y)
		}
		return c.Jitter, c.Wander, c.WanderTime
	}
	if j, wd, wt := served(); math.Abs(j-jitter) > 1e-9 || math.Abs(wd-w.SD) > 1e-9 || math.Abs(wt-w.TimeS) > 1e-9 {
		t.Errorf("sim --calibrate serves jitter %v, wander %v over %v s; the fit's are %v, %v over %v s", j, wd, wt, jitter, w.SD, w.TimeS)
	}
	if j, wd, _ := served("--jitter", "0.01", "--wander", "0"); j != 0.01 || wd != 0 {
		t.Errorf("with --jitter 0.01 --wander 0: jitter %v, wander %v", j, wd)
	}
}
