package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// clusteredData is g groups of n units, each unit 1..5 values drawn from
// a skewed distribution, with ties (rounded to 0.5) so that walks cross
// equal values.
func clusteredData(seed uint64, g, n int, shift float64) [][][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	groups := make([][][]float64, g)
	for i := range groups {
		for range n {
			unit := make([]float64, 1+rng.IntN(5))
			for j := range unit {
				unit[j] = math.Round(2*(shift+10*rng.ExpFloat64()+float64(i))) / 2
			}
			groups[i] = append(groups[i], unit)
		}
	}
	return groups
}

// The fast resampler draws the same resamples as BootstrapDiffInterval, so
// it gives the same interval: exactly for a quantile, to rounding for a
// mean (it sums by unit, not value by value).
func TestDiffIntervalMatchesBootstrap(t *testing.T) {
	tests := []struct {
		name   string
		a, b   [][][]float64
		est    Estimator
		exactp bool
	}{
		{"median, one group each", clusteredData(1, 1, 300, 0), clusteredData(2, 1, 250, 3), Estimator{P: 0.5}, true},
		{"p95, repeats", clusteredData(3, 3, 80, 0), clusteredData(4, 2, 120, 1), Estimator{P: 0.95}, true},
		{"p99", clusteredData(5, 1, 400, 0), clusteredData(6, 1, 400, 0), Estimator{P: 0.99}, true},
		{"p1", clusteredData(7, 2, 200, 0), clusteredData(8, 1, 200, 0), Estimator{P: 0.01}, true},
		{"max", clusteredData(9, 1, 50, 0), clusteredData(10, 1, 60, 0), Estimator{P: 1}, true},
		{"min", clusteredData(11, 1, 50, 0), clusteredData(12, 1, 60, 0), Estimator{P: 0}, true},
		{"one value", [][][]float64{{{3}}}, [][][]float64{{{5}}}, Estimator{P: 0.5}, true},
		{"mean", clusteredData(13, 2, 100, 0), clusteredData(14, 2, 100, 2), Estimator{Mean: true}, false},
	}
	for _, tt := range tests {
		slow := func(xs []float64) float64 { return tt.est.Of(xs) }
		wantLo, wantHi, wantOK := BootstrapDiffInterval(tt.a, tt.b, slow, 0.95, 300, 7)
		got := DiffIntervals([]*Clustered{NewClustered(tt.a)}, []*Clustered{NewClustered(tt.b)}, []Estimator{tt.est}, 0.95, 300, 7)[0]
		lo, hi, ok := got.Lo, got.Hi, got.OK
		tol := 0.0
		if !tt.exactp {
			tol = 1e-9
		}
		if ok != wantOK || math.Abs(lo-wantLo) > tol || math.Abs(hi-wantHi) > tol {
			t.Errorf("%s: [%v, %v] %v, want the bootstrap's [%v, %v] %v", tt.name, lo, hi, ok, wantLo, wantHi, wantOK)
		}
	}
	if got := DiffIntervals([]*Clustered{NewClustered(nil)}, []*Clustered{NewClustered(clusteredData(1, 1, 5, 0))}, []Estimator{{P: 0.5}}, 0.95, 10, 1); got[0].OK {
		t.Error("one side without data must not give an interval")
	}
}

// Statistics resampled together get the intervals each gets alone: the
// units drawn do not depend on what is read from them. Units without
// values (a failed request has no TTFT) are drawn like the others.
func TestDiffIntervalsShared(t *testing.T) {
	a, b := clusteredData(21, 2, 150, 0), clusteredData(22, 1, 200, 1)
	a[0][3], b[0][7] = nil, nil // units without values
	ca, cb := NewClustered(a), NewClustered(b)
	es := []Estimator{{P: 0.5}, {P: 0.95}, {Mean: true}}
	together := DiffIntervals([]*Clustered{ca, ca, ca}, []*Clustered{cb, cb, cb}, es, 0.95, 200, 3)
	for i, e := range es {
		alone := DiffIntervals([]*Clustered{ca}, []*Clustered{cb}, []Estimator{e}, 0.95, 200, 3)[0]
		if together[i] != alone {
			t.Errorf("%+v: together %+v, alone %+v", e, together[i], alone)
		}
		if e.Mean {
			continue
		}
		lo, hi, ok := BootstrapDiffInterval(a, b, QuantileOf(e.P), 0.95, 200, 3)
		if (Interval{lo, hi, ok}) != alone {
			t.Errorf("%+v: %+v, the bootstrap's [%v, %v] %v", e, alone, lo, hi, ok)
		}
	}
}

// Value is the estimator on the data as measured.
func TestClusteredValue(t *testing.T) {
	data := [][][]float64{{{1, 2}, {3}}, {{10}}}
	c := NewClustered(data)
	if got := c.Value(Estimator{P: 0.5}); got != 2.5 {
		t.Errorf("median %v, want 2.5", got)
	}
	if got := c.Value(Estimator{Mean: true}); got != 4 {
		t.Errorf("mean %v, want 4", got)
	}
	if c.Len() != 4 || c.Groups() != 2 {
		t.Errorf("len %d groups %d, want 4, 2", c.Len(), c.Groups())
	}
}

// The time slices' spread is the standard error of batch means; a run too
// short for MinBlocks slices has none.
func TestBlockSE(t *testing.T) {
	units := func(vals ...float64) [][]float64 {
		var u [][]float64
		for _, v := range vals {
			for range MinBlockUnits {
				u = append(u, []float64{v})
			}
		}
		return u
	}
	tests := []struct {
		name  string
		units [][]float64
		need  int
		se    float64
		k     int
		ok    bool
	}{
		// Four slices with means 1, 2, 3, 4: sd √(5/3), over √4.
		{"drift", units(1, 2, 3, 4), 1, math.Sqrt(5.0/3) / 2, 4, true},
		// Steady: no spread between slices.
		{"steady", units(5, 5, 5, 5, 5, 5, 5, 5, 5, 5), 1, 0, MaxBlocks, true},
		// Three slices' worth of requests: too short.
		{"short", units(1, 2, 3), 1, math.NaN(), 3, false},
		// A statistic needing 30 values a slice: 80 requests make two.
		{"needs more values", units(1, 2, 3, 4), 30, math.NaN(), 2, false},
	}
	for _, tt := range tests {
		se, k, ok := BlockSE(tt.units, Estimator{Mean: true}, tt.need)
		if ok != tt.ok || k != tt.k || (ok && math.Abs(se-tt.se) > 1e-12) {
			t.Errorf("%s: se %v k %d ok %v, want %v %d %v", tt.name, se, k, ok, tt.se, tt.k, tt.ok)
		}
	}
}

// BenchmarkDiffInterval is a p50 of inter-token latency in a comparison of
// two runs of 10,000 requests × 64 tokens: 630,000 gaps a side.
func BenchmarkDiffInterval(b *testing.B) {
	gaps := func(seed uint64) [][][]float64 {
		rng := rand.New(rand.NewPCG(seed, 2))
		g := make([][]float64, 10_000)
		for i := range g {
			g[i] = make([]float64, 63)
			for j := range g[i] {
				g[i][j] = 7 + rng.ExpFloat64()
			}
		}
		return [][][]float64{g}
	}
	a, bb := NewClustered(gaps(1)), NewClustered(gaps(2))
	b.ResetTimer()
	for range b.N {
		DiffIntervals([]*Clustered{a}, []*Clustered{bb}, []Estimator{{P: 0.5}}, 0.95, DefaultBootstrapIterations, 1)
	}
}
