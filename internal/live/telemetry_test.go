package live

import (
	"testing"

	"github.com/servebench/servebench/internal/telemetry"
)

// TestTelemetryView: the last reading of each source, in a stable order;
// the tick sums running and waiting over an engine's replicas and averages
// their KV cache; a later reading replaces an earlier one of its source.
func TestTelemetryView(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var tv telemetryView
	if v, _ := tv.view(); v != nil {
		t.Fatalf("no reading: view %+v, want nil", v)
	}
	for _, s := range []*telemetry.Sample{
		{Instance: "http://b/metrics", Server: &telemetry.Server{Engine: "vllm", Running: f(1), Waiting: f(9), KVCacheUsage: f(0.9)}},
		{Instance: "http://b/metrics", Server: &telemetry.Server{Engine: "vllm", Running: f(3), Waiting: f(2), KVCacheUsage: f(0.5)}},
		{Instance: "http://a/metrics", Server: &telemetry.Server{Engine: "vllm", Running: f(4), Waiting: f(1), KVCacheUsage: f(0.3)}},
		{Instance: "nvml", GPU: &telemetry.GPU{Index: 1, Name: "H100", MemoryUsedBytes: f(60e9), MemoryTotalBytes: f(80e9), PowerW: f(500), TemperatureC: f(71)}},
		{Instance: "nvml", GPU: &telemetry.GPU{Index: 0, Name: "H100", MemoryUsedBytes: f(70e9), MemoryTotalBytes: f(80e9), Utilization: f(0.97), PowerW: f(650), TemperatureC: f(75)}},
		{Instance: "procfs", Host: &telemetry.Host{CPUPercent: f(35), RAMUsedBytes: f(12e9), ServerCPUPercent: f(120)}},
		{Instance: "client", Client: &telemetry.Client{CPUPercent: 12, Goroutines: 40, HeapBytes: 3e6}},
	} {
		tv.add(s)
	}
	v, tick := tv.view()
	if len(v.Server) != 2 || v.Server[0].Instance != "http://a/metrics" || *v.Server[1].Running != 3 {
		t.Errorf("server readings %+v, want a then b's last", v.Server)
	}
	if *tick.Running != 7 || *tick.Waiting != 3 || *tick.KVCache != 0.4 {
		t.Errorf("tick running %v waiting %v KV %v, want 7, 3 and 0.4", *tick.Running, *tick.Waiting, *tick.KVCache)
	}
	if len(v.GPUs) != 2 || v.GPUs[0].Index != 0 || *v.GPUs[0].MemoryUsedBytes != 70e9 || *v.GPUs[0].PowerW != 650 ||
		*v.GPUs[0].TemperatureC != 75 || *v.GPUs[0].Utilization != 0.97 || v.GPUs[1].Utilization != nil || *v.GPUs[1].MemoryTotalBytes != 80e9 {
		t.Errorf("GPU readings %+v", v.GPUs)
	}
	if h := v.Host; h == nil || *h.CPUPercent != 35 || *h.RAMUsedBytes != 12e9 || *h.ServerCPUPercent != 120 {
		t.Errorf("host reading %+v", h)
	}
	if c := v.Client; c == nil || c.CPUPercent != 12 || c.Goroutines != 40 || c.HeapBytes != 3e6 {
		t.Errorf("client reading %+v", c)
	}
}
