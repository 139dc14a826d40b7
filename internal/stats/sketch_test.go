package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSketchWithinBound: past ExactMax observations a Sample's quantiles
// are within SketchError of the exact ones of the same observations, for
// shapes a benchmark sees; count, min and max stay exact and the mean is
// the exact mean up to rounding.
func TestSketchWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		gen  func() float64
	}{
		// ITL of a steady stream: 50 ms with microseconds of jitter.
		{"narrow", func() float64 { return 50 + rng.NormFloat64()*0.05 }},
		// TTFT with a long tail.
		{"lognormal", func() float64 { return math.Exp(5 + rng.NormFloat64()) }},
		// Gaps that are often zero (tokens in one chunk) and otherwise spread.
		{"zeros", func() float64 {
			if rng.IntN(3) == 0 {
				return 0
			}
			return rng.Float64() * 100
		}},
		// A lag that can be negative.
		{"signed", func() float64 { return rng.NormFloat64() * 10 }},
		// Two modes far apart: cache hits and misses.
		{"bimodal", func() float64 {
			if rng.IntN(10) == 0 {
				return 2000 + rng.Float64()*100
			}
			return 20 + rng.Float64()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Sample
			xs := make([]float64, 3*ExactMax+7)
			for i := range xs {
				xs[i] = c.gen()
				s.Add(xs[i])
			}
			if s.Exact() {
				t.Fatal("sample past ExactMax is still exact")
			}
			slices.Sort(xs)
			got := s.Summary()
			if got.Count != len(xs) || *got.Min != xs[0] || *got.Max != xs[len(xs)-1] {
				t.Errorf("count %d min %v max %v, want %d %v %v", got.Count, *got.Min, *got.Max, len(xs), xs[0], xs[len(xs)-1])
			}
			if m := Mean(xs); math.Abs(*got.Mean-m) > 1e-9*math.Abs(m)+1e-12 {
				t.Errorf("mean %v, want %v", *got.Mean, m)
			}
			if got.QuantileError != SketchError {
				t.Errorf("quantile_rel_error %v, want %v", got.QuantileError, SketchError)
			}
			for _, q := range Quantiles {
				v, _ := got.Get(q.Key)
				want := Quantile(xs, q.P)
				if math.Abs(v-want) > SketchError*math.Abs(want)+1e-12 {
					t.Errorf("%s: %v, exact %v: off by %.3g%%, bound %.3g%%", q.Key, v, want, 100*math.Abs(v-want)/math.Abs(want), 100*SketchError)
				}
				if s.Quantile(q.P) != v {
					t.Errorf("%s: Quantile %v, Summary %v", q.Key, s.Quantile(q.P), v)
				}
			}
		})
	}
}

// TestSampleExactUpToExactMax: a Sample of ExactMax observations is
// exact, and one more makes it a sketch.
func TestSampleExactUpToExactMax(t *testing.T) {
	var s Sample
	for i := range ExactMax {
		s.Add(float64(i))
	}
	d := s.Summary()
	if !s.Exact() || d.QuantileError != 0 || *d.P50 != float64(ExactMax-1)/2 {
		t.Fatalf("at ExactMax: exact %v, error %v, p50 %v", s.Exact(), d.QuantileError, *d.P50)
	}
	s.Add(ExactMax)
	if s.Exact() || s.Len() != ExactMax+1 {
		t.Fatalf("one past ExactMax: exact %v, Len %d", s.Exact(), s.Len())
	}
}

// TestSketchMemoryBounded: a sketch of many observations holds a few
// thousand buckets, not the observations.
func TestSketchMemoryBounded(t *testing.T) {
	var s Sample
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 * ExactMax {
		s.Add(math.Exp(3 + 2*rng.NormFloat64()))
	}
	if n := len(s.sk.pos) + len(s.sk.neg); n > 20000 {
		t.Errorf("%d buckets for a distribution spanning about 10^5", n)
	}
	if s.xs != nil || s.more != nil {
		t.Error("observations kept after folding into the sketch")
	}
}

// TestSampleExactLimit: a sample with a lower ExactLimit folds past it,
// and its quantiles are within the bound still.
func TestSampleExactLimit(t *testing.T) {
	s := Sample{ExactLimit: 100}
	var xs []float64
	for i := range 1000 {
		x := 200 + float64(i%37)
		xs = append(xs, x)
		s.Add(x)
		if s.Exact() != (i < 100) {
			t.Fatalf("after %d: exact %v", i+1, s.Exact())
		}
	}
	slices.Sort(xs)
	if got, want := s.Quantile(0.95), Quantile(xs, 0.95); math.Abs(got-want) > SketchError*want {
		t.Errorf("p95 %v, exact %v", got, want)
	}
}
