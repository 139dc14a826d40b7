package sim

import (
	"strings"
	"testing"
)

func TestSetsTimeScale(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{"time_scale: 10\n", true},           // set
		{"time_scale: 1\nseed: 2\n", true},   // set to real time is set too
		{"seed: 2\n", false},                 // left to the loader
		{"engine: {time_scale: 3}\n", false}, // only the top level's counts
		{"time_scale: [\n", false},           // not YAML: the loader says why
	} {
		if got := SetsTimeScale([]byte(c.data)); got != c.want {
			t.Errorf("SetsTimeScale(%q) = %v, want %v", c.data, got, c.want)
		}
	}
}

// The banner says whether the simulator runs in real time, and when it
// does not, the header that tells servebench its scale.
func TestWriteBanner(t *testing.T) {
	var real, fast strings.Builder
	cfg := ServeDefaultConfig()
	WriteBanner(&real, cfg, "http://127.0.0.1:8000")
	cfg.TimeScale = 10
	WriteBanner(&fast, cfg, "http://127.0.0.1:8000")
	if !strings.Contains(real.String(), "  real time (batch-1 decode") || strings.Contains(real.String(), TimeScaleHeader) {
		t.Errorf("real time banner:\n%s", real.String())
	}
	if !strings.Contains(fast.String(), "time scale 10: a client measures model time / 10") || !strings.Contains(fast.String(), TimeScaleHeader+": 10") {
		t.Errorf("time scale 10 banner:\n%s", fast.String())
	}
}
