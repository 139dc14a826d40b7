package stats

import (
	"math"
	"testing"
)

func TestBootstrapDiffInterval(t *testing.T) {
	base := make([][]float64, 200)
	for i := range base {
		base[i] = []float64{float64(i + 1)}
	}
	constant := func(v float64, n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = []float64{v}
		}
		return out
	}
	tests := []struct {
		name         string
		a, b         [][][]float64
		stat         func([]float64) float64
		wantLo       float64 // the interval must contain [wantLo, wantHi]
		wantHi       float64
		excludesZero bool
	}{
		// No noise at all: the difference is exact.
		{"constants differ by 2", [][][]float64{constant(5, 50)}, [][][]float64{constant(7, 50)}, Mean, 2, 2, true},
		// The same sample on both sides: the change is noise around 0.
		{"same data", [][][]float64{base}, [][][]float64{base}, QuantileOf(0.5), 0, 0, false},
		// Shifted by 60 (the spread of a median of 200 is about ±14 each
		// side): clearly out of noise.
		{"shift of 60", [][][]float64{base}, [][][]float64{shifted(base, 60)}, QuantileOf(0.5), 60, 60, true},
		// Shifted by 3 against that spread: inside noise.
		{"shift of 3", [][][]float64{base}, [][][]float64{shifted(base, 3)}, QuantileOf(0.5), 3, 3, false},
	}
	for _, tt := range tests {
		lo, hi, ok := BootstrapDiffInterval(tt.a, tt.b, tt.stat, 0.95, DefaultBootstrapIterations, 1)
		if !ok || lo > tt.wantLo || hi < tt.wantHi {
			t.Errorf("%s: [%v, %v] ok=%v, want it to contain [%v, %v]", tt.name, lo, hi, ok, tt.wantLo, tt.wantHi)
		}
		if got := lo > 0 || hi < 0; got != tt.excludesZero {
			t.Errorf("%s: [%v, %v] excludes zero = %v, want %v", tt.name, lo, hi, got, tt.excludesZero)
		}
	}
	lo, hi, _ := BootstrapDiffInterval([][][]float64{base}, [][][]float64{shifted(base, 60)}, Mean, 0.95, 500, 7)
	lo2, hi2, _ := BootstrapDiffInterval([][][]float64{base}, [][][]float64{shifted(base, 60)}, Mean, 0.95, 500, 7)
	if lo != lo2 || hi != hi2 {
		t.Error("same seed, different interval")
	}
	if _, _, ok := BootstrapDiffInterval(nil, [][][]float64{base}, Mean, 0.95, 10, 1); ok {
		t.Error("one side without data must not give an interval")
	}
}

func TestStdDev(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, math.Sqrt(5.0 / 3)}, // sum of squares 5 over n-1
		{[]float64{5, 5}, 0},
		{[]float64{30, 40, 50}, 10},
	} {
		if got := StdDev(c.xs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("StdDev(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	for _, xs := range [][]float64{nil, {7}} {
		if got := StdDev(xs); !math.IsNaN(got) {
			t.Errorf("StdDev(%v) = %v, want NaN", xs, got)
		}
	}
}

func TestRelStdDev(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{30, 40, 50}, 0.25}, // sd 10 over mean 40
		{[]float64{5, 5}, 0},
		{[]float64{7}, 0},
		{nil, 0},
		{[]float64{-1, 1}, 0}, // no positive mean to be a fraction of
	} {
		if got := RelStdDev(c.xs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("RelStdDev(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
