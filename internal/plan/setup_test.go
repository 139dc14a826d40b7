package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestSetupLoadErrors: each thing a setup names that cannot be had fails
// as its own kind, so that the command can say which flag to fix.
func TestSetupLoadErrors(t *testing.T) {
	dir := t.TempDir()
	badDevs := filepath.Join(dir, "devs.yaml")
	os.WriteFile(badDevs, []byte("devices:\n  - name: x\n    memory_gib: -1\n"), 0o644)
	llama := "testdata/models/Llama-3.1-8B"
	tests := []struct {
		name  string
		setup Setup
		is    func(error) bool
	}{
		// A config that is not there: a ModelError of the Hugging Face reader.
		{"missing config", Setup{Model: filepath.Join(dir, "none")}, func(err error) bool {
			m, ok := errors.AsType[*ModelError](err)
			return ok && !m.GGUF && errors.Is(err, fs.ErrNotExist)
		}},
		// A config read as GGUF: a ModelError of the GGUF reader.
		{"config as GGUF", Setup{Model: llama + "/config.json", GGUF: true}, func(err error) bool {
			m, ok := errors.AsType[*ModelError](err)
			return ok && m.GGUF
		}},
		// A devices file that does not parse names the file.
		{"bad devices file", Setup{Model: llama, DeviceFile: badDevs}, func(err error) bool {
			d, ok := errors.AsType[*DeviceFileError](err)
			return ok && d.File == badDevs
		}},
		// A devices file that is not there is the read's own error.
		{"missing devices file", Setup{Model: llama, DeviceFile: filepath.Join(dir, "none.yaml")}, func(err error) bool {
			return errors.As(err, new(*fs.PathError))
		}},
		// The devices file is read before the model: its error comes first.
		{"devices file first", Setup{Model: filepath.Join(dir, "none"), DeviceFile: badDevs}, func(err error) bool {
			return errors.As(err, new(*DeviceFileError))
		}},
		{"unknown device", Setup{Model: llama, Devices: []string{"abacus"}}, func(err error) bool {
			u, ok := errors.AsType[*UnknownDeviceError](err)
			return ok && u.Name == "abacus"
		}},
	}
	for _, tt := range tests {
		_, _, err := tt.setup.Load()
		if err == nil || !tt.is(err) {
			t.Errorf("%s: got %v (%T)", tt.name, err, err)
		}
	}
}

// TestSetupCompareRun: a comparison is made on exactly one device, and a
// run that cannot be read is told apart from the planner's refusals.
func TestSetupCompareRun(t *testing.T) {
	s := Setup{Model: "testdata/models/Llama-3.1-8B", Options: Options{Engine: EngineVLLM, GPUs: 1, Headroom: DefaultHeadroom, Eff: DefaultEfficiency()}}
	if _, err := s.CompareRun("testdata/runs/sim-llama-8b-h100", nil); !errors.Is(err, ErrOneDevice) {
		t.Errorf("the whole catalog: %v, want ErrOneDevice", err)
	}
	s.Devices = []string{"H100-SXM"}
	if _, err := s.CompareRun(filepath.Join(t.TempDir(), "none"), func(string) {}); !errors.As(err, new(*RunError)) {
		t.Errorf("a missing run: %v, want a RunError", err)
	}
	c, err := s.CompareRun("testdata/runs/sim-llama-8b-h100", func(string) {})
	if err != nil || c.Device != "H100-SXM" || len(c.Points) == 0 {
		t.Errorf("got %+v, %v; want the run's points on H100-SXM", c, err)
	}
}

// TestDefaultTuning: a plan with the defaults as durations assumes what
// one with the planner's defaults does (negative overheads being the
// engine's, whatever their size).
func TestDefaultTuning(t *testing.T) {
	s := Setup{Model: "testdata/models/Llama-3.1-8B", Devices: []string{"H100-SXM"},
		Options: Options{Engine: EngineVLLM, GPUs: 1, Headroom: DefaultHeadroom}}
	w := Workload{PromptTokens: 1000, OutputTokens: 100, Concurrency: 4}
	var got [2]*Result
	for i, eff := range []Efficiency{DefaultTuning().Efficiency(), DefaultEfficiency()} {
		s.Eff = eff
		var err error
		if got[i], err = s.Plan(w); err != nil {
			t.Fatal(err)
		}
	}
	if got[0].Assumptions != got[1].Assumptions || got[0].Devices[0].Perf != got[1].Devices[0].Perf {
		t.Errorf("the tuning's defaults assume %+v, the planner's %+v", got[0].Assumptions, got[1].Assumptions)
	}
}

// TestCheckHeadroom: 0 and 90% are the bounds, both kept.
func TestCheckHeadroom(t *testing.T) {
	for _, tt := range []struct {
		h  float64
		ok bool
	}{{0, true}, {0.9, true}, {-0.01, false}, {0.91, false}} {
		if err := CheckHeadroom(tt.h); (err == nil) != tt.ok {
			t.Errorf("CheckHeadroom(%v) = %v", tt.h, err)
		}
	}
}
