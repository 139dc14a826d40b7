package telemetry

import (
	"reflect"
	"testing"
)

// gpuAt is a reading of GPU index on instance at t seconds.
func gpuAt(instance string, index int, t float64, g GPU) Sample {
	g.Index = index
	return Sample{TNS: int64(t * 1e9), Source: KindGPU, Instance: instance, GPU: &g}
}

// steady is a GPU drawing 300 W whose counter says so: 1000 J at 0 s,
// then 300 J more each second.
func steady(t float64) GPU {
	return GPU{Name: "H100", PowerW: new(300.0), EnergyJ: new(1000 + 300*t),
		MemoryUsedBytes: new(10e9 + t*1e9), MemoryTotalBytes: new(80e9),
		Utilization: new(t / 10), TemperatureC: new(60 + t), Throttle: []string{}}
}

func TestSummarizeGPUs(t *testing.T) {
	nvml := func(t float64, g GPU) Sample { return gpuAt("nvml", 0, t, g) }
	var steadyRun []Sample
	for s := range 7 {
		steadyRun = append(steadyRun, nvml(float64(s), steady(float64(s))))
	}
	power := func(w float64) GPU { return GPU{PowerW: new(w)} }
	withEnergy := func(w, j float64) GPU { return GPU{PowerW: new(w), EnergyJ: new(j)} }
	throttle := func(r ...string) GPU { return GPU{Throttle: r} }
	for _, c := range []struct {
		name     string
		from, to float64 // s
		scale    float64
		samples  []Sample
		want     []GPUPoint
	}{{
		// The counter's delta from the last reading before From (1 s) to
		// the last inside (4 s): 3 s at 300 W. Gauges from 2, 3, 4 s only;
		// 5 and 6 s lie after To.
		name: "counter from the baseline", from: 1.5, to: 4, scale: 1, samples: steadyRun,
		want: []GPUPoint{{Instance: "nvml", Index: 0, Name: "H100",
			MemoryUsedBytesMax: new(14e9), MemoryTotalBytes: new(80e9), UtilizationMean: new(0.3),
			PowerWMean: new(300.0), PowerWMax: new(300.0), EnergyJ: new(900.0), TemperatureCMax: new(64.0),
			ThrottleS: new(0.0)}},
	}, {
		// A reading at From is the baseline and inside the window.
		name: "reading at From", from: 1, to: 4, scale: 1, samples: steadyRun,
		want: []GPUPoint{{Instance: "nvml", Index: 0, Name: "H100",
			MemoryUsedBytesMax: new(14e9), MemoryTotalBytes: new(80e9), UtilizationMean: new(0.25),
			PowerWMean: new(300.0), PowerWMax: new(300.0), EnergyJ: new(900.0), TemperatureCMax: new(64.0),
			ThrottleS: new(0.0)}},
	}, {
		// No counter: the trapezoid, (100+200)/2·1 s + (200+300)/2·1 s.
		name: "power integrated", from: 0, to: 2, scale: 1,
		samples: []Sample{nvml(0, power(100)), nvml(1, power(200)), nvml(2, power(300))},
		want: []GPUPoint{{Instance: "nvml", Index: 0, PowerWMean: new(200.0), PowerWMax: new(300.0),
			EnergyJ: new(400.0)}},
	}, {
		// The counter restarts (a driver reload) between 1 and 2 s: that
		// second is integrated from power, the others are counter deltas.
		name: "counter reset", from: 0, to: 3, scale: 1,
		samples: []Sample{nvml(0, withEnergy(100, 5000)), nvml(1, withEnergy(100, 5100)),
			nvml(2, withEnergy(300, 10)), nvml(3, withEnergy(100, 110))},
		want: []GPUPoint{{Instance: "nvml", Index: 0, PowerWMean: new(150.0), PowerWMax: new(300.0),
			EnergyJ: new(400.0)}},
	}, {
		// Power cap 1–3 s, software thermal from 4 s to To (4.5 s); idle
		// and applications clocks are settings, not throttling; the reading
		// before From holds from From. Scale 10: model seconds.
		name: "throttle seconds", from: 0.5, to: 4.5, scale: 10,
		samples: []Sample{nvml(0, throttle("power_cap")), nvml(1, throttle("power_cap")),
			nvml(2, throttle("idle", "power_cap")), nvml(3, throttle("applications_clocks")),
			nvml(4, throttle("sw_thermal"))},
		want: []GPUPoint{{Instance: "nvml", Index: 0, ThrottleS: new(30.0),
			ThrottleReasons: map[string]float64{"power_cap": 25, "sw_thermal": 5}}},
	}, {
		// Two sources, two GPUs each, out of order: one point per GPU,
		// by instance then index; reasons unknown give no throttle_s.
		name: "instances apart", from: 0, to: 1, scale: 1,
		samples: []Sample{gpuAt("nvml", 1, 0, power(10)), gpuAt("dcgm:h", 0, 0, power(20)),
			gpuAt("nvml", 0, 0, power(30)), gpuAt("dcgm:h", 0, 1, power(40))},
		want: []GPUPoint{
			{Instance: "dcgm:h", Index: 0, PowerWMean: new(30.0), PowerWMax: new(40.0), EnergyJ: new(30.0)},
			{Instance: "nvml", Index: 0, PowerWMean: new(30.0), PowerWMax: new(30.0)},
			{Instance: "nvml", Index: 1, PowerWMean: new(10.0), PowerWMax: new(10.0)},
		},
	}, {
		// Readings only before the window: the GPU is absent, not zero.
		name: "nothing inside", from: 10, to: 20, scale: 1, samples: steadyRun,
	}} {
		w := Window{From: int64(c.from * 1e9), To: int64(c.to * 1e9), Scale: c.scale, Samples: c.samples}
		if got := summarizeGPUs(w); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, jsonOf(t, got), jsonOf(t, c.want))
		}
	}
}
