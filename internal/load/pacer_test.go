package load

import (
	"math"
	"strings"
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
		s, err := Arrival{tt.arrival, tt.shape}.Schedule(rate, n, 42)
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
	a, _ := Arrival{}.Schedule(10, 100, 1)
	b, _ := Arrival{}.Schedule(10, 100, 1)
	c, _ := Arrival{}.Schedule(10, 100, 2)
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
		if _, err := (Arrival{tt.arrival, tt.shape}).Schedule(tt.rate, 10, 1); err == nil {
			t.Errorf("Schedule(%q, %v, %v): want error", tt.arrival, tt.rate, tt.shape)
		}
	}
}

// Constant arrivals land exactly on i/rate, however many there are: no
// drift from summing rounded gaps (vegeta's pacer tests check hits the
// same way).
func TestConstantScheduleExactOffsets(t *testing.T) {
	tests := []struct {
		rate float64
		n    int
		want map[int]time.Duration // index → exact offset
	}{
		{1, 4, map[int]time.Duration{0: 0, 1: time.Second, 2: 2 * time.Second, 3: 3 * time.Second}},
		{3, 4, map[int]time.Duration{1: 333333333, 2: 666666667, 3: time.Second}},
		{10, 1001, map[int]time.Duration{10: time.Second, 500: 50 * time.Second, 1000: 100 * time.Second}},
		{0.5, 3, map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second}},
		{1e6, 3000001, map[int]time.Duration{1: time.Microsecond, 3000000: 3 * time.Second}},
	}
	for _, tt := range tests {
		s, err := Arrival{Process: ArrivalConstant}.Schedule(tt.rate, tt.n, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != tt.n {
			t.Fatalf("rate %v: %d offsets, want %d", tt.rate, len(s), tt.n)
		}
		for i, want := range tt.want {
			if s[i] != want {
				t.Errorf("rate %v: offset %d is %v, want %v", tt.rate, i, s[i], want)
			}
		}
	}
}

func TestParseArrival(t *testing.T) {
	tests := []struct {
		process    string
		burstiness float64
		wantErr    string // "" for valid
	}{
		{"poisson", 1, ""},
		{"constant", 0, ""}, // burstiness is ignored
		{"gamma", 0.5, ""},
		{"gamma", 0, "gamma burstiness 0"},
		{"gamma", -1, "must be a positive number"},
		{"gamma", math.NaN(), "gamma burstiness NaN"},
		{"gamma", math.Inf(1), "gamma burstiness +Inf"},
		{"weibull", 1, `arrival process "weibull": use poisson, constant or gamma`},
	}
	for _, tt := range tests {
		a, err := ParseArrival(tt.process, tt.burstiness)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseArrival(%q, %v): %v", tt.process, tt.burstiness, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseArrival(%q, %v): error %v, want %q", tt.process, tt.burstiness, err, tt.wantErr)
		case err == nil && a.Process != tt.process:
			t.Errorf("ParseArrival(%q): process %q", tt.process, a.Process)
		}
	}
}
