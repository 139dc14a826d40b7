package telemetry

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const gib = 1 << 30

// readAll reads src n times, one second apart on the run clock.
func readAll(t *testing.T, src *nvmlSource, n int) [][]Sample {
	t.Helper()
	var out [][]Sample
	for i := range n {
		s, err := src.Read(context.Background(), int64(i)*1e9)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		out = append(out, s)
	}
	return out
}

// TestNVMLReadConverts checks one reading's fields and units: bytes, a
// fraction for utilisation, mW to W, mJ to J, reason bits to names.
func TestNVMLReadConverts(t *testing.T) {
	lib := &fakeNVML{driver: "550.54.15", gpus: []*fakeGPU{{index: 0, name: "NVIDIA H100 80GB HBM3", uuid: "GPU-1", steps: []fakeStep{{
		usedB: 40 * gib, totalB: 80 * gib, utilPct: 75, powerMW: 350500, energyMJ: 1234567,
		tempC: 71, smMHz: 1980, reasons: 0x4 | 0x1,
	}}}}}
	src, err := newNVMLSource(lib)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, src, 1)[0]
	want := []Sample{{TNS: 0, Source: KindGPU, Instance: "nvml", GPU: &GPU{
		Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-1", Driver: "550.54.15",
		MemoryUsedBytes: new(40.0 * gib), MemoryTotalBytes: new(80.0 * gib), Utilization: new(0.75),
		PowerW: new(350.5), EnergyJ: new(1234.567), TemperatureC: new(71.0), SMClockMHz: new(1980.0),
		Throttle: []string{"idle", "power_cap"},
	}}, {TNS: 0, Source: KindEvent, Instance: "nvml", // throttled from the first reading on
		Event: &Event{Kind: "throttle", Source: "nvml", Detail: "GPU 0: power_cap"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s\nwant %s", jsonOf(t, got), jsonOf(t, want))
	}
}

// TestNVMLReadPartial: an unsupported field is absent without complaint;
// a failing one is absent and named in the error, and the reading of the
// other fields and GPUs still comes back.
func TestNVMLReadPartial(t *testing.T) {
	lib := &fakeNVML{gpus: []*fakeGPU{
		{index: 0, steps: []fakeStep{{powerMW: 100000, errs: map[string]error{"energy": errNotSupported}}}},
		{index: 1, steps: []fakeStep{{tempC: 50, errs: map[string]error{"power": errGPULost}}}},
	}}
	src, _ := newNVMLSource(lib)
	got, err := src.Read(context.Background(), 0)
	if err == nil || err.Error() != "GPU 1: power: GPU is lost" {
		t.Errorf("error %v: want GPU 1's power named, nothing of the unsupported energy", err)
	}
	if len(got) != 2 {
		t.Fatalf("%d samples, want both GPUs'", len(got))
	}
	if g := got[0].GPU; g.EnergyJ != nil || g.PowerW == nil || *g.PowerW != 100 {
		t.Errorf("GPU 0: energy %v power %v: want energy absent, power 100 W", g.EnergyJ, g.PowerW)
	}
	if g := got[1].GPU; g.PowerW != nil || g.TemperatureC == nil {
		t.Errorf("GPU 1: power %v temperature %v: want power absent, temperature read", g.PowerW, g.TemperatureC)
	}
}

// TestNVMLThrottleEvents: an event when a limiting reason becomes active,
// none for idle or applications clocks, none while it lasts, one again
// when a new reason joins or throttling resumes.
func TestNVMLThrottleEvents(t *testing.T) {
	unsupported := map[string]error{"reasons": errNotSupported}
	reasons := []fakeStep{
		{reasons: 0},           // free
		{reasons: 0x1 | 0x2},   // idle, applications clocks: settings, no event
		{reasons: 0x4},         // power cap begins
		{reasons: 0x4},         // lasts
		{errs: unsupported},    // unknown: the state is kept
		{reasons: 0x4 | 0x40},  // hardware thermal joins
		{reasons: 0},           // free again
		{reasons: 0x4 | 0x100}, // power cap resumes
	}
	lib := &fakeNVML{gpus: []*fakeGPU{{index: 3, steps: reasons}}}
	src, _ := newNVMLSource(lib)
	var got []string
	for i, samples := range readAll(t, src, len(reasons)) {
		for _, s := range samples {
			if s.Event != nil {
				got = append(got, strings.Join([]string{string(rune('0' + i)), s.Event.Kind, s.Event.Source, s.Event.Detail}, " "))
			}
		}
	}
	want := []string{
		"2 throttle nvml GPU 3: power_cap",
		"5 throttle nvml GPU 3: hw_thermal",
		"7 throttle nvml GPU 3: power_cap",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
}

// TestNVMLXidEvents: each Xid polled becomes an xid event naming the GPU
// and what the Xid means; none of them is counted as out of memory.
func TestNVMLXidEvents(t *testing.T) {
	lib := &fakeNVML{
		gpus: []*fakeGPU{{index: 0, steps: []fakeStep{{}}}, {index: 1, steps: []fakeStep{{}}}},
		xids: [][]xidError{nil, {{Index: 1, Xid: 48}, {Index: 0, Xid: 31}, {Index: 0, Xid: 999}}},
	}
	src, _ := newNVMLSource(lib)
	reads := readAll(t, src, 3)
	var got []Event
	for _, s := range reads[1] {
		if s.Source == KindEvent {
			got = append(got, *s.Event)
		}
	}
	want := []Event{
		{Kind: "xid", Source: "nvml", Detail: "GPU 1: Xid 48: double-bit ECC memory error"},
		{Kind: "xid", Source: "nvml", Detail: "GPU 0: Xid 31: GPU memory page fault (a kernel used an invalid address)"},
		{Kind: "xid", Source: "nvml", Detail: "GPU 0: Xid 999"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %+v\nwant %+v", got, want)
	}
	if n := len(reads[0]) + len(reads[2]); n != 4 {
		t.Errorf("%d samples in the reads without Xids, want the 2 GPUs' each", n)
	}
}

// TestNVMLNoGPU: a driver with no GPU gives a reason and releases NVML.
func TestNVMLNoGPU(t *testing.T) {
	lib := &fakeNVML{}
	if _, err := newNVMLSource(lib); err == nil || err.Error() != "NVML found no GPU" {
		t.Errorf("error %v, want NVML found no GPU", err)
	}
	if !lib.closed {
		t.Error("NVML left open")
	}
}

// TestClockReasonNames decodes masks, keeping bits it does not know.
func TestClockReasonNames(t *testing.T) {
	for _, c := range []struct {
		mask uint64
		want []string
	}{
		{0, []string{}}, // free: known, no reason
		{0x45, []string{"idle", "power_cap", "hw_thermal"}}, // several
		{0x7ff, []string{"idle", "applications_clocks", "power_cap", "hw_slowdown", "sync_boost",
			"sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks", "board_limit", "reliability"}}, // all known
		{0x1008, []string{"hw_slowdown", "bit_0x1000"}}, // a bit from a later driver
	} {
		got := clockReasonNames(c.mask)
		if got == nil || !slices.Equal(got, c.want) {
			t.Errorf("%#x: got %#v, want %q", c.mask, got, c.want)
		}
	}
}
