package sim

import "testing"

// Settings name every field but the seed and the time scale, with the
// value the YAML would write.
func TestSettings(t *testing.T) {
	c := DefaultConfig()
	c.Device.MemBandwidthGBs = 2680
	s := c.Settings()
	if got := s["device.mem_bandwidth_gbs"]; got != "2680" {
		t.Errorf("device.mem_bandwidth_gbs = %q, want 2680", got)
	}
	if got := s["engine.max_num_seqs"]; got != "8" {
		t.Errorf("engine.max_num_seqs = %q, want 8", got)
	}
	for _, k := range []string{"seed", "time_scale", "device", "engine"} {
		if v, ok := s[k]; ok {
			t.Errorf("%s = %q: not a setting of the simulated server", k, v)
		}
	}
	if len(s) < 30 {
		t.Errorf("%d settings, want every field: %v", len(s), s)
	}
}
