package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
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
			"Telemetry over each point's window", "[10–50]", "[10–50]", "scrape_failed 2"}},
		{"markdown", Markdown, []string{"| KV cache peak % | VRAM GiB peak |", "| 87.5 | 71.5 |", "| - | - |",
			"| load | KV cache % mean/max | server TTFT ms p50 | server TTFT ms p99 | events |", "| c=1 | 25.0/87.5 | [10–50] | [10–50] | scrape_failed 2 |", "| c=4 | - | - | - | - |"}},
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

// TestPrefillColumns: the client's prompt tokens ÷ TTFT is named for what
// it is; the server's own prefill throughput is a column of its own only
// where the server told it, with its source under the table: per-request
// timings win over the histograms.
func TestPrefillColumns(t *testing.T) {
	p50 := func(v float64) stats.Dist { return stats.Dist{P50: &v, Count: 1} }
	hist := &telemetry.Point{Server: &telemetry.ServerPoint{PrefillTPS: f64(31508)}}
	for _, tc := range []struct {
		name   string
		points []metrics.PointSummary
		want   []string // in order; "" entries none
		absent string
	}{
		// no server figure: the client's column alone, no note
		{"none", []metrics.PointSummary{{Load: record.Load{Concurrency: 1}, PrefillTPS: p50(7336)}},
			[]string{"prompt/TTFT tok/s", "7336"}, "prefill tok/s"},
		// vLLM-style histograms over the point
		{"histograms", []metrics.PointSummary{{Load: record.Load{Concurrency: 1}, PrefillTPS: p50(7336), Telemetry: hist}},
			[]string{"prompt/TTFT tok/s  prefill tok/s", "p50         server", "7336", "31508", "prefill tok/s server: from " + metrics.PrefillFromHistograms}, ""},
		// Ollama's timings, preferred to the histograms
		{"timings", []metrics.PointSummary{{Load: record.Load{Concurrency: 1}, PrefillTPS: p50(468), ServerPrefill: p50(2950), Telemetry: hist}},
			[]string{"468", "2950", "prefill tok/s server: from " + metrics.PrefillFromTimings}, "31508"},
	} {
		var b strings.Builder
		if err := Text(&b, &metrics.Summary{Points: tc.points}); err != nil {
			t.Fatal(err)
		}
		out, at := b.String(), 0
		for _, w := range tc.want {
			i := strings.Index(out[at:], w)
			if i < 0 {
				t.Errorf("%s: %q missing (after offset %d) in\n%s", tc.name, w, at, out)
				break
			}
			at += i + len(w)
		}
		if tc.absent != "" && strings.Contains(out, tc.absent) {
			t.Errorf("%s: %q shown in\n%s", tc.name, tc.absent, out)
		}
	}
}

// TestServerPercentileCells: a server percentile is printed as a value
// only when its upper bound is at most 1.5 times its lower bound, else
// as the bucket; and one that the client's TTFT of the same point rules
// out (what it claims exceeds the client's by over 10%) is marked.
func TestServerPercentileCells(t *testing.T) {
	ms := func(v float64) stats.Dist { return stats.Dist{P50: &v, P99: &v, Count: 100} }
	point := func(client float64, p50, p99 float64, b50, b99 []float64) *metrics.PointSummary {
		return &metrics.PointSummary{TTFT: ms(client), Telemetry: &telemetry.Point{Server: &telemetry.ServerPoint{
			QueueMS: &telemetry.Quantiles{Count: 100, P50: p50, P99: p99, Bucket: map[string][]float64{"p50": b50, "p99": b99}}}}}
	}
	for _, tc := range []struct {
		name     string
		p        *metrics.PointSummary
		p50, p99 string
	}{
		// narrow buckets: the interpolated values
		{"narrow", point(200, 75, 180, []float64{60, 80}, []float64{150, 200}), "75", "180"},
		// twice as wide: the bucket
		{"wide", point(200, 75, 180, []float64{50, 100}, []float64{100, 250}), "[50–100]", "[100–250]"},
		// vLLM's first queue bucket starts at 0: only the bucket says anything
		{"from zero", point(87, 150, 290, []float64{0, 300}, []float64{0, 300}), "[0–300]", "[0–300]"},
		// the run: server queue p99 495 ms in [300–500] against a
		// client TTFT p99 of 87 ms: the bucket, marked
		{"ruled out", point(87, 150, 495, []float64{0, 300}, []float64{300, 500}), "[0–300]", "[300–500] !"},
		// a narrow bucket's value above the client's: marked
		{"value ruled out", point(162, 120, 198, []float64{100, 200}, []float64{150, 200}), "[100–200]", "198 !"},
		// the unbounded last bucket
		{"last bucket", point(9000, 150, 7000, []float64{0, 300}, []float64{5000}), "[0–300]", "[≥5000]"},
	} {
		if got := serverQuantile(tc.p, false, "p50"); got != tc.p50 {
			t.Errorf("%s: p50 %q, want %q", tc.name, got, tc.p50)
		}
		if got := serverQuantile(tc.p, false, "p99"); got != tc.p99 {
			t.Errorf("%s: p99 %q, want %q", tc.name, got, tc.p99)
		}
	}
}
