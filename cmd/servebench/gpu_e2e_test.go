package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGPUUnavailableSaidOnceRunGoesOn runs the built binary, two load points, against a
// simulator served apart (so that the run looks for local GPUs). Without
// an NVIDIA driver, stderr says why in one line, once, and the run
// completes with no GPU samples or gpus[] (absent, not zero). On a GPU
// machine the same run must carry NVML samples and gpus[] instead.
func TestGPUUnavailableSaidOnceRunGoesOn(t *testing.T) {
	url := clockStartSim(t, "--time-scale", "10")
	dir := filepath.Join(t.TempDir(), "r")
	code, _, stderr := run(t, "run", "--url", url, "--concurrency", "1,2", "--requests", "8", "--output-tokens", "32", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	samples, err := os.ReadFile(filepath.Join(dir, "telemetry.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	gpus := gpuPointsOf(t, filepath.Join(dir, "summary.json"))
	const said = "GPU telemetry unavailable: "
	if n := strings.Count(stderr, said); n == 0 {
		if !strings.Contains(string(samples), `"source":"gpu","instance":"nvml"`) || len(gpus) == 0 {
			t.Errorf("no unavailability said, yet no NVML samples or gpus[]: %s", stderr)
		}
		t.Skip("this machine has GPUs: the unavailable path is not reachable here")
	} else if n > 1 {
		t.Errorf("said %d times, want once:\n%s", n, stderr)
	}
	line := stderr[strings.Index(stderr, said):]
	line = line[:strings.IndexByte(line+"\n", '\n')]
	if reason := strings.TrimPrefix(line, said); len(reason) < 10 {
		t.Errorf("line %q: want a reason", line)
	}
	if strings.Contains(string(samples), `"source":"gpu"`) || len(gpus) != 0 {
		t.Errorf("GPU samples or gpus[] %v without a GPU", gpus)
	}
}

// gpuPointsOf is every point's telemetry.gpus in a summary.json.
func gpuPointsOf(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Points []struct {
			Telemetry struct {
				GPUs []json.RawMessage `json:"gpus"`
			} `json:"telemetry"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []json.RawMessage
	for _, p := range sum.Points {
		out = append(out, p.Telemetry.GPUs...)
	}
	return out
}
