package calib

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/plan"
)

// testRun is a small run servebench wrote (two closed-loop points).
const testRun = "../../cmd/servebench/testdata/run"

// TestLoadReadsTheHeldOutRunFirst: the held-out run is read before the
// fitted one, each run's read error says which run it was, and a
// held-out run that is the fitted one goes by its name.
func TestLoadReadsTheHeldOutRunFirst(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name        string
		src         Sources
		againstErr  bool
		fittedError bool
	}{
		// Both missing: the held-out run is the one told.
		{"both missing", Sources{Dir: missing, Against: missing + "2"}, true, false},
		{"fitted run missing", Sources{Dir: missing, Against: testRun}, false, true},
		{"no held-out run", Sources{Dir: missing}, false, true},
	}
	for _, tt := range tests {
		_, _, err := Load(tt.src, Options{Bootstrap: 2})
		r, ok := errors.AsType[*ReadError](err)
		if !ok || r.Against != tt.againstErr || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v (%T); want a ReadError of the %s run", tt.name, err, err, map[bool]string{true: "held-out", false: "fitted"}[tt.againstErr])
		}
	}
	c, held, err := Load(Sources{Dir: testRun, Against: testRun + string(filepath.Separator)}, Options{Bootstrap: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c.Fit == nil || held == nil || !held.SameRun || held.Dir != testRun {
		t.Errorf("the run against itself: held out %v; want the same run, named %s", held != nil && held.SameRun, testRun)
	}
}

// TestFitDevice: the shared model is fitted on the named model and
// device, and what the planner cannot read fails as the planner's error.
func TestFitDevice(t *testing.T) {
	c, _, err := Load(Sources{Dir: testRun}, Options{Bootstrap: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := &plan.Setup{Model: "../plan/testdata/models/Llama-3.1-8B", Devices: []string{"H100-SXM"},
		Options: plan.Options{Engine: plan.EngineVLLM, GPUs: 1, Eff: plan.DefaultEfficiency()}}
	if err := c.Fit.FitDevice(s, Options{Bootstrap: 8}); err != nil {
		t.Fatal(err)
	} else if c.Fit.Shared.Model == "" || c.Fit.Shared.Device != "H100-SXM" {
		t.Errorf("fitted %+v; want the model's and the device's names", c.Fit.Shared)
	}
	s.Devices = []string{"abacus"}
	if err := c.Fit.FitDevice(s, Options{}); !errors.As(err, new(*plan.UnknownDeviceError)) {
		t.Errorf("an unknown device: %v", err)
	}
	s.Devices, s.Model = []string{"H100-SXM"}, filepath.Join(t.TempDir(), "none")
	if err := c.Fit.FitDevice(s, Options{}); !errors.As(err, new(*plan.ModelError)) {
		t.Errorf("a missing model: %v", err)
	}
}
