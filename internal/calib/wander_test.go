package calib

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ou is an Ornstein-Uhlenbeck speed 1 + sd·X of correlation time tau ms,
// X drawn at every step of a 5 ms grid by its exact transition.
func ou(sd, tau float64, rng *rand.Rand) func(ms float64) float64 {
	const grid = 5.0
	xs := []float64{rng.NormFloat64()}
	a := math.Exp(-grid / tau)
	return func(ms float64) float64 {
		k := int(math.Max(ms, 0) / grid)
		for len(xs) <= k {
			xs = append(xs, a*xs[len(xs)-1]+math.Sqrt(1-a*a)*rng.NormFloat64())
		}
		return math.Max(0.3, 1+sd*xs[k])
	}
}

// wanderRun is a run at concurrency 1 and 4 of the scripted engine, its
// points one after the other on the run's clock.
func wanderRun(e scripted, n int, rng *rand.Rand) []request {
	var reqs []request
	for point, users := range []int{1, 4} {
		shift := 0.0
		if len(reqs) > 0 {
			shift = reqs[len(reqs)-1].end + 100
		}
		for _, r := range e.closedLoop(users, n, 128, 64, rng) {
			r.point = point
			reqs = append(reqs, r.shifted(shift))
		}
	}
	return reqs
}

// TestEstimateWander: an engine whose speed wanders by ±15% (sd) with a
// correlation time of one second is read as such, within the estimate's
// own scatter; a steady one, whose steps only jitter (±10% each), is read
// as steady.
func TestEstimateWander(t *testing.T) {
	decode := func(s int) float64 { return 3 + 1.5*float64(s) }
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 5))
		steady := wanderRun(scripted{decode: decode, slots: 4, overhead: 25}, 256, rng)
		fit, err := fitRequests(steady, nil, Options{Slots: 4, Bootstrap: 1})
		if err != nil {
			t.Fatal(err)
		}
		if fit.Wander != nil {
			t.Errorf("seed %d: a steady engine read as wandering: %+v", seed, *fit.Wander)
		}
		wandering := wanderRun(scripted{decode: decode, slots: 4, overhead: 25, speed: ou(0.15, 1000, rng)}, 256, rng)
		if fit, err = fitRequests(wandering, nil, Options{Slots: 4, Bootstrap: 1}); err != nil {
			t.Fatal(err)
		}
		w := fit.Wander
		if w == nil {
			t.Fatalf("seed %d: a wandering engine read as steady", seed)
		}
		t.Logf("seed %d: sd %.3f, time %.2f s, lag1 %.2f over %d windows of %.0f ms", seed, w.SD, w.TimeS, w.Lag1, w.Windows, w.WindowMS)
		if !(w.SD > 0.15*0.7 && w.SD < 0.15*1.3) || !(w.TimeS > 0.5 && w.TimeS < 2) {
			t.Errorf("seed %d: wander sd %.3f over %.2f s, want 0.15 over 1 s", seed, w.SD, w.TimeS)
		}
	}
}
