package stats

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestQuantileType7(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"single sample is every quantile", []float64{7}, 0.99, 7},
		{"median of even count interpolates", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"p0 is min", []float64{1, 2, 3, 4}, 0, 1},
		{"p100 is max", []float64{1, 2, 3, 4}, 1, 4},
		// numpy.percentile(range(1,11), 90) == 9.1
		{"p90 of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9, 9.1},
		// numpy.percentile(range(1,101), 99) == 99.01
		{"p99 of 1..100", seq(100), 0.99, 99.01},
		{"p95 of 1..100", seq(100), 0.95, 95.05},
	}
	for _, tt := range tests {
		got := Quantile(tt.xs, tt.p)
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty sample must give NaN")
	}
}

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

func TestSummary(t *testing.T) {
	var s Sample
	for _, x := range []float64{5, 1, 4, 2, 3, math.NaN(), math.Inf(1)} {
		s.Add(x)
	}
	d := s.Summary()
	check := map[string]float64{"p1": 1.04, "p5": 1.2, "p10": 1.4, "mean": 3, "p50": 3, "p90": 4.6, "p95": 4.8, "p99": 4.96, "p999": 4.996, "max": 5, "min": 1}
	for k, want := range check {
		got, ok := d.Get(k)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: got %v (%v), want %v", k, got, ok, want)
		}
	}
	if d.Count != 5 {
		t.Errorf("count: got %d, want 5 (NaN and Inf dropped)", d.Count)
	}
}

func TestEmptySummaryIsNull(t *testing.T) {
	var s Sample
	b, err := json.Marshal(s.Summary())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mean":null,"p1":null,"p5":null,"p10":null,"p50":null,"p90":null,"p95":null,"p99":null,"p999":null,"max":null,"min":null,"count":0}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

func TestMinSamplesAndWarnings(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want int
	}{{0.9, 10}, {0.95, 20}, {0.99, 100}, {0.999, 1000}} {
		if got := MinSamples(tt.p); got != tt.want {
			t.Errorf("MinSamples(%v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	var s Sample
	for i := range 50 {
		s.Add(float64(i))
	}
	got := ThinTails(s.Summary(), "p1", "p5", "p50", "p90", "p95", "p99", "p999")
	// p1, p99 and p999 lack samples; p5, p90 and p95 have enough.
	if strings.Join(got, " ") != "p1 p99 p999" {
		t.Errorf("got %q, want p1 p99 p999", got)
	}
}

func TestFractionAtMost(t *testing.T) {
	var s Sample
	for _, x := range []float64{1, 2, 2, 3} {
		s.Add(x)
	}
	if got := s.FractionAtMost(2); got != 0.75 {
		t.Errorf("got %v, want 0.75", got)
	}
	if got := s.FractionAtMost(0.5); got != 0 {
		t.Errorf("got %v, want 0", got)
	}
}

// TestSampleBlocks: past the first block, observations go to blocks of
// their own; Len counts them all and Sorted joins and sorts them, also
// after more are added to a sorted sample.
func TestSampleBlocks(t *testing.T) {
	var s Sample
	n := 3*sampleBlock + 17
	for i := n; i > 0; i-- {
		s.Add(float64(i))
	}
	if s.Len() != n || len(s.more) != 3 {
		t.Fatalf("Len %d with %d blocks, want %d and 3", s.Len(), len(s.more), n)
	}
	xs := s.Sorted()
	if len(xs) != n || xs[0] != 1 || xs[n-1] != float64(n) || !slices.IsSorted(xs) {
		t.Fatalf("Sorted: %d values from %v to %v, sorted %v", len(xs), xs[0], xs[len(xs)-1], slices.IsSorted(xs))
	}
	for i := range sampleBlock + 1 {
		s.Add(float64(-i))
	}
	if s.Len() != n+sampleBlock+1 || s.Quantile(0) != -sampleBlock || s.Quantile(1) != float64(n) {
		t.Errorf("after more: Len %d, min %v, max %v", s.Len(), s.Quantile(0), s.Quantile(1))
	}
}
