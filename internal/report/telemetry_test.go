package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

func f64(v float64) *float64 { return &v }

// telemetrySummary has two points: c=1 with server and GPU telemetry,
// c=4 without any.
func telemetrySummary() *metrics.Summary {
	tel := &telemetry.Point{
		Server: &telemetry.ServerPoint{KVCacheUsage: &telemetry.MeanMax{Mean: 0.25, Max: 0.875},
			TTFTMS: &telemetry.Quantiles{Count: 10, P50: 30, P99: 48, Bucket: map[string][]float64{"p50": {10, 50}, "p99": {10, 50}}}},
		GPUs:   []telemetry.GPUPoint{{Index: 0, MemoryUsedBytesMax: f64(70 << 30)}, {Index: 1, MemoryUsedBytesMax: f64(71.5 * (1 << 30))}},
		Events: map[string]int{telemetry.EventScrapeFailed: 2},
	}
	return &metrics.Summary{Points: []metrics.PointSummary{
		{Index: 0, Load: record.Load{Concurrency: 1}, LoadHeld: true, Telemetry: tel},
		{Index: 1, Load: record.Load{Concurrency: 4}, LoadHeld: true},
	}}
}

func TestTelemetryInTables(t *testing.T) {
	tests := []struct {
		name   string
		render Renderer
		want   []string // in order
	}{
		{"text", Text, []string{"KV cache  VRAM GiB", "peak %      peak", "87.5      71.5\n", "-         -\n",
			"Telemetry over each point's window", "30 [10–50]", "48", "scrape_failed 2"}},
		{"markdown", Markdown, []string{"| KV cache peak % | VRAM GiB peak |", "| 87.5 | 71.5 |", "| - | - |",
			"| load | KV cache % mean/max | server TTFT ms p50 (bucket) | server TTFT ms p99 | events |", "| c=1 | 25.0/87.5 | 30 [10–50] | 48 | scrape_failed 2 |", "| c=4 | - | - | - | - |"}},
	}
	for _, tc := range tests {
		var b strings.Builder
		if err := tc.render(&b, telemetrySummary()); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		at := 0
		for _, w := range tc.want {
			i := strings.Index(out[at:], w)
			if i < 0 {
				t.Errorf("%s: %q missing (after offset %d) in\n%s", tc.name, w, at, out)
				break
			}
			at += i + len(w)
		}
	}
}

// A summary without telemetry shows neither the columns nor the section.
func TestNoTelemetryNoColumns(t *testing.T) {
	s := telemetrySummary()
	s.Points[0].Telemetry = nil
	for name, r := range map[string]Renderer{"text": Text, "markdown": Markdown} {
		var b strings.Builder
		if err := r(&b, s); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); strings.Contains(out, "KV cache") || strings.Contains(out, "VRAM") || strings.Contains(out, "Telemetry") {
			t.Errorf("%s shows telemetry without any:\n%s", name, out)
		}
	}
}
