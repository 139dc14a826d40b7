package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// behindArgs judge an objective that any server meets (a median first
// token within ten minutes) on a simulator this machine cannot keep: at
// time scale 3000 a decode step is a few µs of wall time, which no
// machine runs on time for 16 streams (TestSimBehindWarned); 160
// requests make the point long enough for a dozen telemetry readings.
// The request timeout is in model time, 0.2 s of wall time at this scale
// by default: on a host too busy to run the simulator even roughly on
// time, half the requests timed out, the load stopped early as overloaded
// before the sampler had read the simulator's clock twice in it, and no
// point said it was behind; a timeout of 1,000 model hours (20 wall
// minutes) leaves the point to run its requests.
func behindArgs(t *testing.T, extra ...string) []string {
	cfg := filepath.Join(t.TempDir(), "fast.yaml")
	if err := os.WriteFile(cfg, []byte("time_scale: 3000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return append([]string{"run", "--sim-config", cfg, "--concurrency", "16", "--requests", "160",
		"--output-tokens", "256", "--sample-interval", "20ms", "--timeout", "1000h", "--slo", "ttft p50 <= 600s"}, extra...)
}

// TestBehindSimulatorIsInconclusive: an objective judged on a simulator
// that fell behind its clock is INCONCLUSIVE, never HOLDS: the reason is
// printed beside the word, and the exit is 4.
func TestBehindSimulatorIsInconclusive(t *testing.T) {
	// runEnv, not run: this machine falling behind is what is tested
	code, stdout, stderr := runEnv(t, nil, behindArgs(t)...)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "OBJECTIVE HOLDS") || strings.Contains(stdout, "NOT MET") {
		t.Errorf("a conclusion on invalid evidence:\n%s", stdout)
	}
	for _, want := range []string{
		"OBJECTIVE INCONCLUSIVE at concurrency 16: sim_behind: the simulator fell behind its clock at time scale 3000",
		"INCONCLUSIVE (sim_behind",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "Error: objective command-line INCONCLUSIVE at concurrency 16: sim_behind:") || !strings.Contains(stderr, "Try: ") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// The same in --json: the verdict says inconclusive with the reason, and
// the point carries its validity.
func TestBehindSimulatorIsInconclusiveJSON(t *testing.T) {
	code, stdout, stderr := runEnv(t, nil, behindArgs(t, "--json")...)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, stderr)
	}
	var rep struct {
		Points []struct {
			Validity struct {
				Valid   bool `json:"valid"`
				Reasons []struct {
					Code string `json:"code"`
				} `json:"reasons"`
			} `json:"validity"`
		} `json:"points"`
		Verdict struct {
			Holds        bool     `json:"holds"`
			Inconclusive bool     `json:"inconclusive"`
			Conclusion   string   `json:"conclusion"`
			Reasons      []string `json:"reasons"`
			Text         string   `json:"text"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	v := rep.Verdict
	if v.Holds || !v.Inconclusive || v.Conclusion != "inconclusive" || len(v.Reasons) == 0 ||
		!strings.HasPrefix(v.Reasons[0], "inconclusive at concurrency 16: sim_behind: ") || !strings.Contains(v.Text, "INCONCLUSIVE at the target load") {
		t.Errorf("verdict %+v", v)
	}
	if len(rep.Points) != 1 || rep.Points[0].Validity.Valid || len(rep.Points[0].Validity.Reasons) == 0 ||
		rep.Points[0].Validity.Reasons[0].Code != "sim_behind" {
		t.Errorf("points[].validity %+v", rep.Points)
	}
}

// Without telemetry the simulator's lag is still known: each point reads
// the simulator's skipped time at its start and end (run.json's
// sim_clock_lost_ms), so that an objective judged on a simulator that
// fell behind is inconclusive, never HOLDS, whatever was sampled.
func TestBehindSimulatorWithoutTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runEnv(t, nil, behindArgs(t, "--no-telemetry", "--out", dir)...)
	if code != 4 || !strings.Contains(stdout, "INCONCLUSIVE (sim_behind") || strings.Contains(stdout, "OBJECTIVE HOLDS") {
		t.Fatalf("exit %d, want 4 and the point INCONCLUSIVE (sim_behind)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "the simulator fell behind its clock at c=16") {
		t.Errorf("stdout lacks the warning above the table:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Points []struct {
			SimClockLostMS *float64 `json:"sim_clock_lost_ms"`
			StartNS        int64    `json:"start_ns"`
			EndNS          int64    `json:"end_ns"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 1 || run.Points[0].SimClockLostMS == nil ||
		*run.Points[0].SimClockLostMS < 0.05*float64(run.Points[0].EndNS-run.Points[0].StartNS)/1e6*3000 {
		t.Errorf("run.json points %+v, want the simulator's skipped time, 5%% of the window or more", run.Points)
	}
	if _, err := os.Stat(filepath.Join(dir, "telemetry.jsonl")); !os.IsNotExist(err) {
		t.Errorf("telemetry.jsonl written with --no-telemetry (%v)", err)
	}
}
