package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// sustained is a scripted sustained run: two users for 8 s in 1 s slices,
// each request 10 tokens 100 ms into its answer, the gap between tokens
// growing from 10 ms to 18 ms over the run, so aggregate throughput falls
// by about a third; the GPU warms from 60 °C by 2 °C a second and its
// clocks throttle 0.5 s in each slice from 4 s on, while the server's KV
// cache fills from 50% by 3 points a second.
func sustained() *metrics.Summary {
	a := metrics.Aggregator{Slice: time.Second}
	id := int64(0)
	for u := range int64(2) {
		for t := u; t < 8000; {
			id++
			r := rec(0, 2, id, t, 100, 10+t/1000, 10)
			a.Add(r)
			t = r.EndNS / msNS
		}
	}
	run := &record.Run{Schema: record.RunSchema, Version: "test", Started: "2026-01-02T03:04:05Z",
		Target:       record.Target{URL: "http://127.0.0.1:8000", API: "openai-chat", Model: "llama"},
		PromptTokens: "512", OutputTokens: "10", Seed: 7, SliceS: 1}
	s := metrics.Summarize(run, &a)
	s.AddSliceTelemetry(func(_ int, from, _ int64) *telemetry.Point {
		sec := float64(from) / 1e9
		temp, power, throttle := 60+2*sec, 400.0, 0.0
		if sec >= 4 {
			throttle = 0.5
		}
		return &telemetry.Point{GPUs: []telemetry.GPUPoint{{TemperatureCMax: &temp, PowerWMean: &power, ThrottleS: &throttle}},
			Server: &telemetry.ServerPoint{KVCacheUsage: &telemetry.MeanMax{Max: 0.5 + 0.03*sec}}}
	})
	return s
}

// TestSustainedGolden renders the sustained run in every format.
func TestSustainedGolden(t *testing.T) {
	for name, r := range Formats {
		var buf bytes.Buffer
		if err := r(&buf, sustained()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		golden(t, "sustained."+name+".golden", buf.Bytes())
	}
}

// TestDriftWarningOnTop: a detected drift is printed between the header
// and the table, once, and not again among the warnings under it; the
// slice table and the drift line follow the main table.
func TestDriftWarningOnTop(t *testing.T) {
	for _, format := range []string{"text", "markdown"} {
		var buf bytes.Buffer
		if err := Formats[format](&buf, sustained()); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		warn, table := strings.Index(out, "WARNING c=2: drift: aggregate throughput fell by"), strings.Index(out, "speed tok/s/req")
		slices, line := strings.Index(out, "Slices of 1 s at c=2"), strings.Index(out, "rift:** over")
		if format == "text" {
			line = strings.Index(out, "  drift: over")
		}
		if warn < 0 || table < warn || slices < table || line < slices || strings.Count(out, "drift: aggregate") != 1 {
			t.Errorf("%s: drift warning at %d, table at %d, slices at %d, drift line at %d, want them in that order, the warning once:\n%s",
				format, warn, table, slices, line, out)
		}
		if !strings.Contains(out, "GPU clocks throttled in 4 of ") || !strings.Contains(out, "GPU °C") {
			t.Errorf("%s: the telemetry beside the drift is missing:\n%s", format, out)
		}
	}
}

// TestSliceColumnsFollowTelemetry: a slice table shows the telemetry
// columns whose figure some slice has: a server's KV cache without GPU
// readings adds its column alone; no telemetry adds none.
func TestSliceColumnsFollowTelemetry(t *testing.T) {
	s := sustained()
	s.AddSliceTelemetry(func(int, int64, int64) *telemetry.Point {
		return &telemetry.Point{Server: &telemetry.ServerPoint{KVCacheUsage: &telemetry.MeanMax{Max: 0.25}}}
	})
	var buf bytes.Buffer
	if err := Text(&buf, s); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "KV cache %") || strings.Contains(out, "GPU °C") || strings.Contains(out, "GPU W") || !strings.Contains(out, "no GPU telemetry") {
		t.Errorf("KV cache only: want its column, no GPU column, and the drift saying there was no GPU telemetry:\n%s", out)
	}
	s.AddSliceTelemetry(func(int, int64, int64) *telemetry.Point { return nil })
	buf.Reset()
	if err := Text(&buf, s); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "KV cache %") || strings.Contains(out, "throttled s") {
		t.Errorf("no telemetry: telemetry columns shown:\n%s", out)
	}
}
