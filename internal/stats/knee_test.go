package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSaturation(t *testing.T) {
	tests := []struct {
		name            string
		loads, tps, lat []float64
		want            int // -1: none
	}{
		// 8 slots: throughput doubles up to 8, then flat while latency rises.
		{"slot limit", []float64{1, 2, 4, 8, 16}, []float64{100, 200, 400, 800, 810}, []float64{1, 1, 1.1, 1.2, 2.4}, 3},
		// Dense probes after a bisection: 8→9→10 add nothing.
		{"dense probes", []float64{1, 2, 4, 8, 9, 10, 12, 16}, []float64{100, 200, 400, 790, 800, 795, 805, 800},
			[]float64{1, 1, 1, 1.2, 1.3, 1.5, 1.8, 2.4}, 3},
		// A noisy dip at 4→5 is not the knee: 8 still buys much more.
		{"noise is not a knee", []float64{1, 2, 4, 5, 8, 16}, []float64{100, 200, 400, 402, 790, 800},
			[]float64{1, 1, 1, 1.1, 1.2, 2.4}, 4},
		// Linear scaling all the way: no knee.
		{"never saturates", []float64{1, 2, 4, 8}, []float64{100, 200, 400, 800}, []float64{1, 1, 1, 1}, -1},
		// Throughput flat but latency flat too (a client-side limit, say): no knee.
		{"flat latency", []float64{1, 2, 4}, []float64{100, 101, 102}, []float64{1, 1, 1}, -1},
		// Throughput falling after the peak (thrashing) is saturation.
		{"decline", []float64{1, 2, 4, 8}, []float64{100, 200, 150, 120}, []float64{1, 1.1, 3, 6}, 1},
		{"one point", []float64{1}, []float64{100}, []float64{1}, -1},
		{"zero throughput skipped", []float64{1, 2, 4}, []float64{0, 0, 0}, []float64{1, 2, 3}, -1},
	}
	for _, tt := range tests {
		got, ok := Saturation(tt.loads, tt.tps, tt.lat, DefaultSaturationGain)
		if !ok {
			got = -1
		}
		if got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestBootstrapInterval(t *testing.T) {
	one := make([][]float64, 200)
	for i := range one {
		one[i] = []float64{float64(i + 1)}
	}
	lo, hi, ok := BootstrapInterval([][][]float64{one}, QuantileOf(0.5), 0.95, DefaultBootstrapIterations, 1)
	// Median of 1..200 is 100.5; its 95% interval spans roughly ±14.
	if !ok || !(lo < 100.5 && hi > 100.5) || hi-lo > 40 || hi-lo < 10 {
		t.Errorf("median CI [%v, %v]", lo, hi)
	}
	lo2, hi2, _ := BootstrapInterval([][][]float64{one}, QuantileOf(0.5), 0.95, DefaultBootstrapIterations, 1)
	if lo2 != lo || hi2 != hi {
		t.Error("same seed, different interval")
	}
	// Two repeats that disagree widen the interval beyond either alone.
	low, high := shifted(one, 0), shifted(one, 60)
	lo3, hi3, _ := BootstrapInterval([][][]float64{low, high}, QuantileOf(0.5), 0.95, DefaultBootstrapIterations, 1)
	if hi3-lo3 < 2*(hi-lo) {
		t.Errorf("between-run spread ignored: [%v, %v] vs [%v, %v]", lo3, hi3, lo, hi)
	}
	// Units carrying many values (tokens of a request) are resampled whole.
	multi := [][]float64{{1, 1, 1, 1}, {9}}
	lo4, hi4, _ := BootstrapInterval([][][]float64{multi}, Mean, 0.95, 500, 2)
	if lo4 != 1 || hi4 != 9 {
		t.Errorf("cluster resampling: [%v, %v], want [1, 9]", lo4, hi4)
	}
	if _, _, ok := BootstrapInterval(nil, Mean, 0.95, 10, 1); ok {
		t.Error("no data must not give an interval")
	}
	if m := Mean(nil); !math.IsNaN(m) {
		t.Error("mean of nothing")
	}
}

func shifted(units [][]float64, by float64) [][]float64 {
	out := make([][]float64, len(units))
	for i, u := range units {
		out[i] = []float64{u[0] + by}
	}
	return out
}

// slopeOf is SlopeAcc's slope of the points (xs[i], ys[i]).
func slopeOf(xs, ys []float64) float64 {
	var a SlopeAcc
	for i := range min(len(xs), len(ys)) {
		a.Add(xs[i], ys[i])
	}
	return a.Slope()
}

func TestSlope(t *testing.T) {
	if got := slopeOf([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); math.Abs(got-2) > 1e-12 {
		t.Errorf("slope %v, want 2", got)
	}
	if got := slopeOf([]float64{0, 1, 2}, []float64{5, 5, 5}); got != 0 {
		t.Errorf("flat: %v", got)
	}
	if !math.IsNaN(slopeOf([]float64{1}, []float64{1})) || !math.IsNaN(slopeOf([]float64{2, 2}, []float64{1, 3})) {
		t.Error("undefined slopes must be NaN")
	}
}

// twoPassSlope is the least-squares slope by the textbook two passes:
// the reference SlopeAcc is held to.
func twoPassSlope(xs, ys []float64) float64 {
	n := min(len(xs), len(ys))
	if n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range n {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx float64
	for i := range n {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// TestSlopeAccMatchesSlope: the slope taken point by point is the
// two-pass formula's, on noisy, steep, flat and single-x data.
func TestSlopeAccMatchesSlope(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name       string
		slope, off float64
		noise      float64
		sameX      bool
	}{{"noisy", 0.3, 1e3, 50, false}, {"steep", 400, 2e9, 1, false}, {"flat", 0, 5, 0, false}, {"one x", 1, 0, 1, true}} {
		var xs, ys []float64
		var a SlopeAcc
		for i := range 5000 {
			x := 1.7e9 + float64(i)*0.25 + r.Float64()
			if tc.sameX {
				x = 42
			}
			y := tc.off + tc.slope*x + tc.noise*r.NormFloat64()
			xs, ys = append(xs, x), append(ys, y)
			a.Add(x, y)
		}
		want, got := twoPassSlope(xs, ys), a.Slope()
		if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want))) {
			t.Errorf("%s: SlopeAcc %v, two passes %v", tc.name, got, want)
		}
		if a.N() != len(xs) || a.SpanX() != slices.Max(xs)-slices.Min(xs) {
			t.Errorf("%s: %d points over %v, want %d over %v", tc.name, a.N(), a.SpanX(), len(xs), slices.Max(xs)-slices.Min(xs))
		}
	}
	var a SlopeAcc
	a.Add(1, 1)
	if !math.IsNaN(a.Slope()) {
		t.Error("one point has a slope")
	}
}
