package telemetry

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNVMLThroughSamplerToSummary runs a scripted GPU through the whole
// path a run takes: the sampler reads the NVML source and writes
// telemetry.jsonl, the file is read back (as `servebench report DIR`
// does), and the point's summary gives energy per output token and
// throttle seconds that the readings actually taken make knowable. The
// GPU's counter gains 50 J a reading; its clocks are power-capped at
// readings 2 and 3 only.
func TestNVMLThroughSamplerToSummary(t *testing.T) {
	var steps []fakeStep
	for i := range 1000 {
		s := fakeStep{energyMJ: uint64(1e6 + 50e3*i), powerMW: 50000, usedB: uint64(i) << 20}
		if i == 2 || i == 3 {
			s.reasons = 0x4
		}
		steps = append(steps, s)
	}
	lib := &fakeNVML{gpus: []*fakeGPU{{index: 0, name: "fake", steps: steps}}}
	src, err := newNVMLSource(lib)
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	sm := StartSampler(SamplerOptions{Epoch: time.Now(), Interval: 10 * time.Millisecond, Sources: []Source{src}, Out: &file})
	for deadline := time.Now().Add(10 * time.Second); sm.Taken() < 8 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := sm.Stop(); err != nil {
		t.Fatal(err)
	}
	if !lib.closed {
		t.Error("NVML left open after the sampler stopped")
	}
	if !strings.Contains(file.String(), `"throttle":[]`) || !strings.Contains(file.String(), `"throttle":["power_cap"]`) {
		t.Errorf("telemetry.jsonl does not keep free clocks as [] and the cap by name:\n%.600s", file.String())
	}
	samples, damaged, err := ReadSamples(&file)
	if err != nil || damaged > 0 {
		t.Fatalf("read back: %v, %d damaged", err, damaged)
	}
	var times []int64 // of the GPU readings, in the order taken
	for _, s := range samples {
		if s.GPU != nil {
			times = append(times, s.TNS)
		}
	}
	n := len(times)
	if n < 5 || !slices.IsSorted(times) {
		t.Fatalf("%d GPU readings at %v: want at least 5, in order", n, times)
	}
	const tokens = 200.0
	p := Summarize(Window{From: times[0], To: times[n-1], Scale: 2, Samples: samples}, tokens)
	if p == nil || len(p.GPUs) != 1 || p.EnergyJPerOutputToken == nil || p.GPUs[0].ThrottleS == nil {
		t.Fatalf("summary %s: want one GPU with energy per token and throttle time", jsonOf(t, p))
	}
	wantJ := 50 * float64(n-1)
	if got := *p.EnergyJPerOutputToken; math.Abs(got-wantJ/tokens) > 1e-9 {
		t.Errorf("energy per output token %v, want %v J over %v tokens", got, wantJ, tokens)
	}
	// Readings 2 and 3 hold until reading 4; scale 2 doubles it.
	wantS := float64(times[4]-times[2]) / 1e9 * 2
	if got := *p.GPUs[0].ThrottleS; math.Abs(got-wantS) > 1e-9 {
		t.Errorf("throttle %v s, want %v s", got, wantS)
	}
	if p.Events[EventThrottle] != 1 {
		t.Errorf("events %v: want the one throttle event", p.Events)
	}
}
