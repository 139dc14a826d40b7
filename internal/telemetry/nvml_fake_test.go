package telemetry

import (
	"encoding/json"
	"errors"
	"testing"
)

// fakeNVML is an nvmlLib whose GPUs give scripted readings: reading i of a
// GPU returns step i of its script (the last step repeats).
type fakeNVML struct {
	gpus   []*fakeGPU
	driver string
	xids   [][]xidError // per PollXid call
	polls  int
	closed bool
}

func (f *fakeNVML) Devices() []nvmlDevice {
	out := make([]nvmlDevice, len(f.gpus))
	for i, g := range f.gpus {
		out[i] = g
	}
	return out
}

func (f *fakeNVML) DriverVersion() string { return f.driver }

func (f *fakeNVML) PollXid() ([]xidError, error) {
	defer func() { f.polls++ }()
	if f.polls < len(f.xids) {
		return f.xids[f.polls], nil
	}
	return nil, nil
}

func (f *fakeNVML) Close() error { f.closed = true; return nil }

// fakeStep is one scripted reading; a nil error field means the value is
// read, errNotSupported or another error replaces it.
type fakeStep struct {
	usedB, totalB uint64
	utilPct       uint32
	powerMW       uint32
	energyMJ      uint64
	tempC         uint32
	smMHz         uint32
	reasons       uint64
	errs          map[string]error // by method: "energy", "power", ...
}

type fakeGPU struct {
	index      int
	name, uuid string
	steps      []fakeStep
	// reads counts Identity calls, one per reading, to advance the script.
	reads int
}

func (g *fakeGPU) step() fakeStep { return g.steps[min(g.reads-1, len(g.steps)-1)] }

func (g *fakeGPU) err(field string) error { return g.step().errs[field] }

func (g *fakeGPU) Identity() (int, string, string) {
	g.reads++
	return g.index, g.name, g.uuid
}
func (g *fakeGPU) Memory() (uint64, uint64, error) {
	return g.step().usedB, g.step().totalB, g.err("memory")
}
func (g *fakeGPU) Utilization() (uint32, error)  { return g.step().utilPct, g.err("util") }
func (g *fakeGPU) PowerMW() (uint32, error)      { return g.step().powerMW, g.err("power") }
func (g *fakeGPU) EnergyMJ() (uint64, error)     { return g.step().energyMJ, g.err("energy") }
func (g *fakeGPU) TemperatureC() (uint32, error) { return g.step().tempC, g.err("temp") }
func (g *fakeGPU) SMClockMHz() (uint32, error)   { return g.step().smMHz, g.err("clock") }
func (g *fakeGPU) ClockReasons() (uint64, error) { return g.step().reasons, g.err("reasons") }

var errGPULost = errors.New("GPU is lost")

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
