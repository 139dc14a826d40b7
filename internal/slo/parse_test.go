package slo

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in                    string
		metric, pct, stat, op string
		value                 float64
		unit, expr            string
	}{
		{"ttft p95 <= 1.5s", "ttft", "p95", "p95", "<=", 1500, "ms", "ttft p95 <= 1.5s"},
		{"itl p95 <= 50ms", "itl", "p95", "p95", "<=", 50, "ms", "itl p95 <= 50ms"},
		{"e2e p99 <= 20s", "e2e", "p99", "p99", "<=", 20000, "ms", "e2e p99 <= 20s"},
		{"error_rate <= 0.5%", "error_rate", "", "", "<=", 0.005, "fraction", "error_rate <= 0.5%"},
		{"error_rate < 0.01", "error_rate", "", "", "<", 0.01, "fraction", "error_rate < 0.01"},
		// Speeds: pNN is the share of requests at least this fast, so the
		// statistic read is the low quantile p(100−NN).
		{"speed p95 >= 20 tok/s", "speed", "p95", "p5", ">=", 20, "tok/s", "speed p95 >= 20 tok/s"},
		{"decode_tps_per_request p99 >= 5", "speed", "p99", "p1", ">=", 5, "tok/s", "speed p99 >= 5 tok/s"},
		{"speed p90 > 12tok/s", "speed", "p90", "p10", ">", 12, "tok/s", "speed p90 > 12 tok/s"},
		{"speed median >= 30 tok/s", "speed", "p50", "p50", ">=", 30, "tok/s", "speed p50 >= 30 tok/s"},
		{"at least 20 tok/s per user at p95", "speed", "p95", "p5", ">=", 20, "tok/s", "speed p95 >= 20 tok/s"},
		{"At least 8 tok/s per user", "speed", "p50", "p50", ">=", 8, "tok/s", "speed p50 >= 8 tok/s"},
		{"  TTFT  P99.9 ≤ 250 ms ", "ttft", "p999", "p999", "<=", 250, "ms", "ttft p999 <= 250ms"},
		{"tpot mean <= 40ms", "tpot", "mean", "mean", "<=", 40, "ms", "tpot mean <= 40ms"},
		{"e2e max <= 2m", "e2e", "max", "max", "<=", 120000, "ms", "e2e max <= 2m"},
		{"ttft p50 <= 800us", "ttft", "p50", "p50", "<=", 0.8, "ms", "ttft p50 <= 800us"},
		{"throughput >= 2000 tok/s", "throughput", "", "", ">=", 2000, "tok/s", "throughput >= 2000 tok/s"},
		{"oom <= 0", "out_of_memory", "", "", "<=", 0, "requests", "out_of_memory <= 0"},
		// The prefix cache: a hit rate is a floor, TTFT of hits and misses
		// are read as ttft.
		{"prefix_hit_rate >= 50%", "prefix_hit_rate", "", "", ">=", 0.5, "fraction", "prefix_hit_rate >= 50%"},
		{"cache_hit_rate > 0.7", "prefix_hit_rate", "", "", ">", 0.7, "fraction", "prefix_hit_rate > 0.7"},
		{"ttft_hit p95 <= 200ms", "ttft_hit", "p95", "p95", "<=", 200, "ms", "ttft_hit p95 <= 200ms"},
		{"ttft_miss p99 <= 1s", "ttft_miss", "p99", "p99", "<=", 1000, "ms", "ttft_miss p99 <= 1s"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		got := []any{s.Metric, s.Percentile, s.Stat, s.Op, s.Unit, s.Expr}
		want := []any{tt.metric, tt.pct, tt.stat, tt.op, tt.unit, tt.expr}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: got %v, want %v", tt.in, got, want)
				break
			}
		}
		if math.Abs(s.Value-tt.value) > 1e-12 {
			t.Errorf("%q: value %v, want %v", tt.in, s.Value, tt.value)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ttft p95 1s", "no comparison"},
		{"ttft p95 = 1s", "use <=, <, >= or >"},
		{"ttft p95 >= 1s", "lower is better, so write <="},
		{"speed p95 <= 20 tok/s", "higher is better, so write >="},
		{"prefix_hit_rate <= 50%", "prefix_hit_rate: higher is better, so write >= (e.g. 'prefix_hit_rate >= 50%')"},
		{"prefix_hit_rate >= 150%", "prefix_hit_rate is at most 100%"},
		// p5 of a speed would bind only the fastest 5%: the user meant p95.
		{"speed p5 >= 20 tok/s", "pNN means NN% of requests are at least this fast"},
		{"ttft p5 <= 1s", "upper percentile"},
		{"ttft <= 1s", "needs a percentile"},
		{"error_rate p95 <= 1%", "takes no percentile"},
		{"ttft p95 <= 1.5", "needs a unit"},
		{"ttft p95 <= 1.5 parsecs", "needs a unit"},
		{"speed p95 >= 20 km/h", "a speed is in tok/s"},
		{"error_rate <= 150%", "at most 100%"},
		{"error_rate <= 5 requests", "fraction"},
		{"bogus p95 <= 1s", "unknown metric"},
		{"ttft p42 <= 1s", "percentile \"p42\""},
		// A bad value is named as written, with an example of a good one.
		{"ttft p95 <= banana", `SLO "ttft p95 <= banana": value "banana" is not a number, e.g. 'ttft p95 <= 1.5s'`},
		{"speed p95 >= fast", `value "fast" is not a number, e.g. 'speed p95 >= 20 tok/s'`},
		{"error_rate <= ", `no value after <=, e.g. 'error_rate <= 0.5%'`},
		{"ttft p95 <= -1s", `value "-1s" is not a non-negative number`},
		{"ttft p95 <= NaNs", `value "nans" is not a number`},
		{"ttft p95 <= 1e13s", `value "1e13s" is more than 1e12`},
		{"ttft p95 <= 1e400s", `value "1e400s" is more than 1e12`},
		{"oom <= 0.5", "whole number"},
		{"at least 20 tok/s", "per user"},
		{"at least 20 tok/s per user sometimes", "unexpected"},
		{"a b c <= 1s", "METRIC [PERCENTILE]"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}

// TestSpeedDirection checks both ways that a per-user speed SLO reads the
// low quantile and passes only when that many requests are fast enough.
func TestSpeedDirection(t *testing.T) {
	s, _ := Parse("speed p95 >= 20 tok/s")
	if s.Stat != "p5" || !s.HigherIsBetter() {
		t.Fatalf("speed p95 reads %s", s.Stat)
	}
	if s.Holds(19.9) || !s.Holds(20) || !s.Holds(25) {
		t.Error("a floor holds at or above its value only")
	}
	if got := s.Margin(25); got != 5 {
		t.Errorf("floor margin %v, want 5 (measured − target)", got)
	}
	l, _ := Parse("ttft p95 <= 1s")
	if l.Holds(1000.1) || !l.Holds(1000) || l.Margin(800) != 200 {
		t.Error("a ceiling holds at or below its value, margin target − measured")
	}
}

func TestFormat(t *testing.T) {
	s, _ := Parse("ttft p95 <= 1.5s")
	for v, want := range map[float64]string{2100: "2.1s", 312.44: "312ms", 0.456: "0.456ms", math.NaN(): "-"} {
		if got := s.Format(v); got != want {
			t.Errorf("format %v: %q, want %q", v, got, want)
		}
	}
	e, _ := Parse("error_rate <= 0.5%")
	if got := e.Format(0.0123); got != "1.23%" {
		t.Errorf("error rate: %q", got)
	}
}

// FuzzParse: any input either fails to parse or yields an SLO whose
// canonical expression parses back to the same SLO.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"ttft p95 <= 1.5s", "speed p95 >= 20 tok/s", "error_rate <= 0.5%",
		"at least 20 tok/s per user at p95", "e2e p99 <= 1e3ms", "oom <= 0", "throughput >= 1 t/s", "ttft p99.9 ≤ 2s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		again, err := Parse(s.Expr)
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", in, s.Expr, err)
		}
		if again.Expr != s.Expr || again.Stat != s.Stat || again.Op != s.Op ||
			math.Abs(again.Value-s.Value) > 1e-9*math.Max(1, s.Value) {
			t.Fatalf("%q → %+v → %+v", in, s, again)
		}
		if s.Value < 0 || math.IsNaN(s.Value) {
			t.Fatalf("%q: value %v", in, s.Value)
		}
	})
}
