package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

func TestParseGate(t *testing.T) {
	tests := []struct {
		in        string
		stat      string // the summary statistic read
		relative  bool
		threshold float64
		canonical string
	}{
		{"ttft p95 +10%", "p95", true, 0.10, "ttft p95 +10%"},
		// 95% of requests at least this fast: the p5 of speeds.
		{"speed p95 -5%", "p5", true, 0.05, "speed p95 -5%"},
		{"  E2E  P99  +200ms ", "p99", false, 200, "e2e p99 +200ms"},
		{"e2e p99 +1.5s", "p99", false, 1500, "e2e p99 +1500ms"},
		{"itl median +0%", "p50", true, 0, "itl p50 +0%"},
		{"throughput -50 tok/s", "", false, 50, "throughput -50 tok/s"},
		{"throughput -3%", "", true, 0.03, "throughput -3%"},
		// An error rate's percentage is percentage points.
		{"error_rate +1%", "", false, 0.01, "error_rate +1%"},
		{"error_rate +0.02", "", false, 0.02, "error_rate +2%"},
		{"decode_tps p50 -5 %", "p50", true, 0.05, "speed p50 -5%"},
	}
	for _, tt := range tests {
		g, err := ParseGate(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if g.Stat.Stat != tt.stat || g.Relative != tt.relative || math.Abs(g.Threshold-tt.threshold) > 1e-12 || g.String() != tt.canonical {
			t.Errorf("%q: stat %q relative %v threshold %v canonical %q; want %q %v %v %q",
				tt.in, g.Stat.Stat, g.Relative, g.Threshold, g.String(), tt.stat, tt.relative, tt.threshold, tt.canonical)
		}
	}
}

func TestParseGateErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ttft p95 10%", "no threshold"},
		{"ttft p95 -10%", "ttft p95 gets worse when it rises, so its threshold is written +N"},
		{"speed p50 +5%", "speed p50 gets worse when it falls, so its threshold is written -N"},
		{"ttfx p95 +10%", `unknown metric "ttfx"`},
		{"ttft +10%", "ttft needs a percentile"},
		{"throughput p95 -5%", "takes no percentile"},
		{"ttft p95 +10", "a latency needs a unit"},
		{"ttft p95 +x%", `"x" is not a non-negative percentage`},
		{"speed p95 -5 ms", `unit "ms": a speed is in tok/s`},
		{"error_rate +101%", "at most 100%"},
		{"+10%", "want METRIC [PERCENTILE]"},
	}
	for _, tt := range tests {
		_, err := ParseGate(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}

// FuzzParseGate: no text makes the parser panic, and what it accepts
// reads back the same from its canonical form.
func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"ttft p95 +10%", "speed p50 -5%", "e2e p99 +200ms", "throughput -50 tok/s", "error_rate +1%", "itl p99 +1e3us", "+", "ttft p95 +-1%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGate(s)
		if err != nil {
			return
		}
		if !(g.Threshold >= 0) || math.IsInf(g.Threshold, 0) {
			t.Fatalf("%q: threshold %v", s, g.Threshold)
		}
		back, err := ParseGate(g.String())
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", s, g.String(), err)
		}
		if back.Stat.Name() != g.Stat.Name() || back.Relative != g.Relative || math.Abs(back.Threshold-g.Threshold) > 1e-9*math.Max(1, g.Threshold) {
			t.Fatalf("%q → %q reads back as %+v, not %+v", s, g.String(), back, g)
		}
	})
}

// A gate fails only when the metric got worse beyond its threshold and
// beyond its interval; without an interval it is not known to, and does
// not fail.
func TestGateJudge(t *testing.T) {
	ttft := func(a, b, lo, hi float64) Change {
		c := Change{Metric: "ttft p95", A: &a, B: &b, Diff: ptr(b - a)}
		c.CI = ciOf(lo, hi)
		c.Verdict = judge(lo, hi, false)
		return c
	}
	speed := Change{Metric: "speed p50", HigherIsBetter: true, A: ptr(100), B: ptr(90), Diff: ptr(-10), Verdict: Worse}
	speed.CI = ciOf(-12, -8)
	noCI := Change{Metric: "throughput", HigherIsBetter: true, A: ptr(1000), B: ptr(800), Diff: ptr(-200), Verdict: Unknown, Why: "one run each"}
	tests := []struct {
		name   string
		gate   string
		c      Change
		failed bool
		worse  float64
	}{
		{"beyond threshold and interval", "ttft p95 +10%", ttft(100, 120, 15, 25), true, 0.20},
		{"beyond threshold, inside noise", "ttft p95 +10%", ttft(100, 120, -5, 45), false, 0.20},
		{"out of noise but within threshold", "ttft p95 +10%", ttft(100, 105, 2, 8), false, 0.05},
		{"better", "ttft p95 +10%", ttft(100, 80, -25, -15), false, -0.20},
		{"absolute", "ttft p95 +15ms", ttft(100, 120, 15, 25), true, 20},
		{"speed falls 10%", "speed p50 -5%", speed, true, 0.10},
		{"speed within 20%", "speed p50 -20%", speed, false, 0.10},
		// Unknown whether beyond noise (one run each): it does not fail.
		{"no interval: unknown", "throughput -10%", noCI, false, 0.20},
	}
	for _, tt := range tests {
		g, err := ParseGate(tt.gate)
		if err != nil {
			t.Fatal(err)
		}
		gr := g.judge(record.Load{Concurrency: 1}, tt.c)
		if gr.Failed != tt.failed || gr.Worse == nil || math.Abs(*gr.Worse-tt.worse) > 1e-9 {
			t.Errorf("%s: failed %v worse %v (%s), want %v %v", tt.name, gr.Failed, fmtPtr(gr.Worse), gr.Reason, tt.failed, tt.worse)
		}
	}
}

func ptr(v float64) *float64 { return &v }

func ciOf(lo, hi float64) *slo.Interval { return &slo.Interval{Low: lo, High: hi, Level: 0.95} }

// TestResultOutcomes: what exit codes are told from, as one line each: the
// gates that failed with their load, the points judged on invalid
// evidence with the reason, and the differences known to break control
// (one only one run reports is not known).
func TestResultOutcomes(t *testing.T) {
	c8 := record.Load{Concurrency: 8}
	r := &Result{
		Gates:       []GateResult{{Gate: "ttft p95 +10%", Load: c8, Failed: true}, {Gate: "speed p50 -5%", Load: c8}},
		Points:      []Point{{Load: record.Load{Concurrency: 1}}, {Load: c8, Inconclusive: "B: sim_behind"}},
		Differences: []Difference{{Property: "model", A: "a", B: "b", Known: true}, {Property: "quantization", A: "q4", Known: false}},
	}
	if got, want := strings.Join(r.Failures(), "; "), "ttft p95 +10% at c=8"; got != want {
		t.Errorf("Failures %q, want %q", got, want)
	}
	if got, want := strings.Join(r.InconclusiveAt(), "; "), "c=8 (B: sim_behind)"; got != want {
		t.Errorf("InconclusiveAt %q, want %q", got, want)
	}
	if got, want := r.KnownDifferences(), r.Differences[0].Text(); got != want {
		t.Errorf("KnownDifferences %q, want %q", got, want)
	}
}
