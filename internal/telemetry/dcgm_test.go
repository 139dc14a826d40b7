package telemetry

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestDCGMSource(t *testing.T) {
	_, hs := servePage(t, readTestdata(t, "dcgm.txt"))
	got, err := NewDCGMSource(Endpoint{URL: hs.URL + "/metrics"}).Read(context.Background(), 42)
	if err != nil {
		t.Fatal(err)
	}
	// One sample per GPU, and GPU 1's limits becoming active: an event.
	if len(got) != 3 || got[2].Event == nil || got[2].Event.Kind != EventThrottle ||
		got[2].Event.Detail != "GPU 1: power_cap, hw_thermal" {
		t.Fatalf("%d samples (%+v), want GPUs 0 and 1 and a throttle event for GPU 1", len(got), got)
	}
	got = got[:2]
	const mb = 1 << 20
	want := []GPU{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-5fb3b3a4-0000-0000-0000-000000000000", Driver: "560.35.03",
			MemoryUsedBytes: f(76000 * mb), MemoryTotalBytes: f((76000 + 4096 + 1000) * mb),
			Utilization: f(0.87), PowerW: f(512.25), EnergyJ: f(123456.789), TemperatureC: f(61), SMClockMHz: f(1980),
			Throttle: []string{}},
		// 68 = 0x40 (hardware thermal slowdown) | 0x4 (software power cap).
		{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-7a21c9d2-0000-0000-0000-000000000000", Driver: "560.35.03",
			MemoryUsedBytes: f(78000 * mb), MemoryTotalBytes: f((78000 + 2048 + 1000) * mb),
			Utilization: f(1), PowerW: f(699.5), EnergyJ: f(987654.321), TemperatureC: f(83), SMClockMHz: f(1755),
			Throttle: []string{"power_cap", "hw_thermal"}},
	}
	for i, s := range got {
		if s.Source != KindGPU || s.Instance != "dcgm:"+hs.URL+"/metrics" || s.TNS != 42 {
			t.Errorf("sample %d: source %q instance %q t %d", i, s.Source, s.Instance, s.TNS)
		}
		if !reflect.DeepEqual(*s.GPU, want[i]) {
			t.Errorf("GPU %d:\n got %s\nwant %s", i, gpuString(s.GPU), gpuString(&want[i]))
		}
	}
}

func gpuString(g *GPU) string {
	return strings.Join([]string{g.Name, g.Driver, fmtPtr(g.MemoryUsedBytes), fmtPtr(g.MemoryTotalBytes),
		fmtPtr(g.Utilization), fmtPtr(g.PowerW), fmtPtr(g.EnergyJ), fmtPtr(g.TemperatureC),
		fmtPtr(g.SMClockMHz), strings.Join(g.Throttle, "+")}, " ")
}

func TestDCGMXidEvents(t *testing.T) {
	page := func(xid string) string {
		return "DCGM_FI_DEV_FB_USED{gpu=\"3\"} 100\nDCGM_FI_DEV_XID_ERRORS{gpu=\"3\"} " + xid + "\n"
	}
	ps, hs := servePage(t, page("13")) // an Xid from before the run
	src := NewDCGMSource(Endpoint{URL: hs.URL})
	steps := []struct {
		xid    string
		events int
	}{
		{"13", 0}, // the first reading: its Xid may be old
		{"13", 0}, // unchanged
		{"79", 1}, // a new Xid
		{"0", 0},  // cleared
	}
	for i, st := range steps {
		ps.set(page(st.xid))
		got, err := src.Read(context.Background(), int64(i))
		if err != nil {
			t.Fatal(err)
		}
		var ev []*Event
		for _, s := range got {
			if s.Event != nil {
				ev = append(ev, s.Event)
			}
		}
		if len(ev) != st.events {
			t.Fatalf("step %d (xid %s): %d events, want %d", i, st.xid, len(ev), st.events)
		}
		if len(ev) == 1 && (ev[0].Kind != EventXid || ev[0].Detail != "GPU 3: Xid 79: GPU has fallen off the bus") {
			t.Errorf("event %+v", ev[0])
		}
	}
}

func TestDCGMThrottleEvents(t *testing.T) {
	page := func(mask string) string {
		return "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 100\nDCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"0\"} " + mask + "\n"
	}
	ps, hs := servePage(t, page("1"))
	src := NewDCGMSource(Endpoint{URL: hs.URL})
	var details []string
	for i, mask := range []string{"1", "5", "5", "69", "1", "4"} { // idle; +power cap; same; +hw thermal; free; power cap again
		ps.set(page(mask))
		got, err := src.Read(context.Background(), int64(i))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range got {
			if s.Event != nil {
				details = append(details, itoa(i)+" "+s.Event.Kind+" "+s.Event.Detail)
			}
		}
	}
	want := []string{"1 throttle GPU 0: power_cap", "3 throttle GPU 0: hw_thermal", "5 throttle GPU 0: power_cap"}
	if !reflect.DeepEqual(details, want) {
		t.Errorf("events %q, want %q", details, want)
	}
}

func TestNodeSource(t *testing.T) {
	ps, hs := servePage(t, readTestdata(t, "node.txt"))
	src := NewNodeSource(Endpoint{URL: hs.URL})
	got, err := src.Read(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	h := got[0].Host
	if got[0].Instance != "node:"+hs.URL || *h.RAMTotalBytes != 3.2e10 || *h.RAMAvailBytes != 1.2e10 ||
		*h.RAMUsedBytes != 2e10 || h.CPUPercent != nil {
		t.Fatalf("first read: %+v (cpu %s), want RAM and no CPU %% yet", *h, fmtPtr(h.CPUPercent))
	}
	// Second read: cpu0 +30 user, +10 idle, +10 iowait; cpu1 +15 system,
	// +5 steal, +30 idle. Busy 50 of 100 s, 5 of them stolen.
	next := strings.NewReplacer(
		`cpu="0",mode="user"} 140`, `cpu="0",mode="user"} 170`,
		`cpu="1",mode="steal"} 0`, `cpu="1",mode="steal"} 5`,
		`cpu="0",mode="idle"} 1000`, `cpu="0",mode="idle"} 1010`,
		`cpu="0",mode="iowait"} 10`, `cpu="0",mode="iowait"} 20`,
		`cpu="1",mode="system"} 20`, `cpu="1",mode="system"} 35`,
		`cpu="1",mode="idle"} 1100`, `cpu="1",mode="idle"} 1130`,
	).Replace(readTestdata(t, "node.txt"))
	ps.set(next)
	got, err = src.Read(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if c, st := got[0].Host.CPUPercent, got[0].Host.StealPercent; c == nil || !near(*c, 50) || st == nil || !near(*st, 5) {
		t.Errorf("cpu = %s, steal = %s; want 50 and 5", fmtPtr(c), fmtPtr(st))
	}
	ps.set("up 1\n")
	if _, err := src.Read(context.Background(), 3); err == nil || !strings.Contains(err.Error(), "not a node exporter") {
		t.Errorf("err = %v, want it to say this is not a node exporter", err)
	}
}
