package calib

import (
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
)

// A served calibration takes the fit's slots, noise, KV cache, context cap
// and the run's model name, except the settings the user set.
func TestServeConfigKeepsWhatWasSet(t *testing.T) {
	c := &Calibration{
		Fit: &Fit{Model: Model{StepMS: 10}, Slots: 6, OverheadIn: "queue", Wander: &Wander{SD: 0.02, TimeS: 30}},
		Run: Run{Summary: &metrics.Summary{Run: &record.Run{Target: record.Target{Model: "measured-model"}}}},
	}
	base := sim.DefaultConfig()
	none := c.ServeConfig(base, func(string) bool { return false })
	if none.Engine.MaxNumSeqs != 6 || none.Model.Name != "measured-model" || none.Wander != 0.02 || none.Engine.OverheadIn != "queue" ||
		none.Model.MaxModelLen != Unlimited {
		t.Errorf("nothing set: slots %d, name %q, wander %g, overhead in %q, max model len %d; want the fit's",
			none.Engine.MaxNumSeqs, none.Model.Name, none.Wander, none.Engine.OverheadIn, none.Model.MaxModelLen)
	}
	set := map[string]bool{"engine.max_num_seqs": true, "model.name": true, "wander_time": true}
	kept := c.ServeConfig(base, func(f string) bool { return set[f] })
	if kept.Engine.MaxNumSeqs != base.Engine.MaxNumSeqs || kept.Model.Name != base.Model.Name || kept.Wander != base.Wander ||
		kept.Engine.OverheadIn != "queue" {
		t.Errorf("slots, name and wander set: %d, %q, %g, overhead in %q; want %d, %q, %g and the fit's overhead",
			kept.Engine.MaxNumSeqs, kept.Model.Name, kept.Wander, kept.Engine.OverheadIn, base.Engine.MaxNumSeqs, base.Model.Name, base.Wander)
	}
}
