package load

import (
	"math"
	"testing"
	"time"
)

func TestScheduleRates(t *testing.T) {
	tests := []struct {
		arrival string
		shape   float64
		cv      float64 // expected coefficient of variation of the gaps
	}{
		{ArrivalConstant, 0, 0},
		{ArrivalPoisson, 0, 1},
		{ArrivalGamma, 1, 1},
		{ArrivalGamma, 0.25, 2}, // cv = 1/sqrt(shape)
		{ArrivalGamma, 4, 0.5},
	}
	const rate, n = 50.0, 40001
	for _, tt := range tests {
		s, err := Schedule(tt.arrival, rate, tt.shape, n, 42)
		if err != nil {
			t.Fatal(err)
		}
		if s[0] != 0 {
			t.Errorf("%s: first arrival at %v, want 0", tt.arrival, s[0])
		}
		var sum, sq float64
		for i := 1; i < n; i++ {
			g := (s[i] - s[i-1]).Seconds()
			if g < 0 {
				t.Fatalf("%s: schedule goes backwards at %d", tt.arrival, i)
			}
			sum += g
			sq += g * g
		}
		m := sum / (n - 1)
		cv := math.Sqrt(math.Max(sq/(n-1)-m*m, 0)) / m
		if got := 1 / m; math.Abs(got-rate)/rate > 0.03 {
			t.Errorf("%s(%v): rate %v, want %v", tt.arrival, tt.shape, got, rate)
		}
		if math.Abs(cv-tt.cv) > 0.05+0.05*tt.cv {
			t.Errorf("%s(%v): gap cv %v, want %v", tt.arrival, tt.shape, cv, tt.cv)
		}
	}
}

func TestScheduleSeeded(t *testing.T) {
	a, _ := Schedule(ArrivalPoisson, 10, 0, 100, 1)
	b, _ := Schedule(ArrivalPoisson, 10, 0, 100, 1)
	c, _ := Schedule(ArrivalPoisson, 10, 0, 100, 2)
	same := func(x, y []time.Duration) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("same seed gave different schedules")
	}
	if same(a, c) {
		t.Error("different seeds gave the same schedule")
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, tt := range []struct {
		arrival string
		rate    float64
		shape   float64
	}{
		{ArrivalPoisson, 0, 0},  // zero rate
		{ArrivalPoisson, -1, 0}, // negative rate
		{ArrivalGamma, 1, 0},    // gamma without a shape
		{"weibull", 1, 0},       // unknown process
		{ArrivalPoisson, math.Inf(1), 0},
	} {
		if _, err := Schedule(tt.arrival, tt.rate, tt.shape, 10, 1); err == nil {
			t.Errorf("Schedule(%q, %v, %v): want error", tt.arrival, tt.rate, tt.shape)
		}
	}
}
