package stats

import (
	"math"
	"testing"
)

// Anscombe's first data set: its published fit is y = 3.0001 + 0.5001·x,
// slope standard error 0.1179, r = 0.8164 (Anscombe 1973; any statistics
// package reproduces them).
var anscombeX = []float64{10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5}
var anscombeY = []float64{8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestTQuantile(t *testing.T) {
	tests := []struct {
		p, df, want float64
	}{
		{0.975, 1, 12.7062},  // the widest: two points' residual leave one degree of freedom
		{0.975, 2, 4.3027},   // tables' second row
		{0.975, 9, 2.2622},   // Anscombe's 11 points
		{0.975, 10, 2.2281},  // tables' tenth row
		{0.975, 30, 2.0423},  // a 30-minute run in one-minute slices, roughly
		{0.975, 1e6, 1.9600}, // the normal limit
		{0.5, 5, 0},          // the median of a symmetric distribution
		{0.025, 10, -2.2281}, // the lower tail mirrors the upper
	}
	for _, tt := range tests {
		if got := TQuantile(tt.p, tt.df); !near(got, tt.want, 1e-4) {
			t.Errorf("TQuantile(%v, %v) = %.5f, want %.4f", tt.p, tt.df, got, tt.want)
		}
	}
}

func TestRegress(t *testing.T) {
	tests := []struct {
		name                 string
		xs, ys               []float64
		ok                   bool
		slope, intercept, se float64
		lo, hi               float64
		excludesZero         bool
	}{
		// published figures; interval 0.5001 ± 2.2622·0.1179
		{"anscombe", anscombeX, anscombeY, true, 0.5001, 3.0001, 0.1179, 0.2334, 0.7668, true},
		// a perfect line: no residual, so a zero-width interval at the slope
		{"exact line", []float64{0, 1, 2, 3}, []float64{2, 5, 8, 11}, true, 3, 2, 0, 3, 3, true},
		// a falling line: Sxy = −20, Sxx = 10, residuals ±0.4/0.6 give
		// s² = 1.2/3 → SE = 0.2; t(3) = 3.1824
		{"falling", []float64{0, 1, 2, 3, 4}, []float64{11, 8, 7, 4, 3}, true, -2, 10.6, 0.2, -2.6365, -1.3635, true},
		// noise around a flat line: the interval straddles zero
		// (Sxy = 0.5, Sxx = 17.5, SSR = 5.4857, t(4) = 2.7764)
		{"flat noisy", []float64{0, 1, 2, 3, 4, 5}, []float64{5, 7, 4, 6, 5, 6}, true, 0.0286, 5.4286, 0.2799, -0.7487, 0.8058, false},
		// two points leave no degree of freedom for an interval
		{"two points", []float64{0, 1}, []float64{1, 2}, false, 0, 0, 0, 0, 0, false},
		// all at one x: no slope
		{"no spread", []float64{2, 2, 2}, []float64{1, 2, 3}, false, 0, 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		f, ok := Regress(tt.xs, tt.ys)
		if ok != tt.ok {
			t.Errorf("%s: ok = %v, want %v", tt.name, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"slope", f.Slope, tt.slope}, {"intercept", f.Intercept, tt.intercept}, {"SE", f.SE, tt.se}, {"lo", f.Lo, tt.lo}, {"hi", f.Hi, tt.hi}} {
			if !near(c.got, c.want, 2e-4) {
				t.Errorf("%s: %s = %.5f, want %.4f", tt.name, c.what, c.got, c.want)
			}
		}
		if f.ExcludesZero() != tt.excludesZero {
			t.Errorf("%s: ExcludesZero = %v, want %v", tt.name, f.ExcludesZero(), tt.excludesZero)
		}
	}
}

func TestCorrelate(t *testing.T) {
	tests := []struct {
		name        string
		xs, ys      []float64
		ok          bool
		r           float64
		significant bool
	}{
		// published r; t = 4.24 with 9 degrees of freedom, beyond 2.26
		{"anscombe", anscombeX, anscombeY, true, 0.8164, true},
		// a perfect inverse relation
		{"inverse", []float64{1, 2, 3, 4}, []float64{8, 6, 4, 2}, true, -1, true},
		// r = 5/√58 with five points: t = 1.51, inside ±3.18
		{"weak", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 3.5}, true, 0.6565, false},
		// a constant series has no correlation to speak of
		{"constant", []float64{1, 2, 3}, []float64{70, 70, 70}, false, 0, false},
		{"too few", []float64{1, 2}, []float64{3, 4}, false, 0, false},
	}
	for _, tt := range tests {
		c, ok := Correlate(tt.xs, tt.ys)
		if ok != tt.ok {
			t.Errorf("%s: ok = %v, want %v", tt.name, ok, tt.ok)
			continue
		}
		if ok && (!near(c.R, tt.r, 1e-4) || c.Significant != tt.significant) {
			t.Errorf("%s: r = %.5f significant %v, want %.4f %v", tt.name, c.R, c.Significant, tt.r, tt.significant)
		}
	}
}
