// Package load owns when requests are sent: open-loop pacers that turn a
// request rate into a precomputed, seeded schedule, and closed loops of
// virtual users. It emits one record per request and never drops one.
package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrival processes for open-loop load.
const (
	ArrivalPoisson  = "poisson"  // exponential gaps: independent users
	ArrivalConstant = "constant" // equal gaps
	ArrivalGamma    = "gamma"    // gamma gaps; shape < 1 is burstier than Poisson
)

// Schedule returns n arrival offsets from the start of a load point for the
// given rate (requests per second). The first arrival is at 0. shape is the
// gamma shape parameter (1 = Poisson); it is ignored by the other processes.
// The schedule depends only on its arguments, so a seed reproduces it.
func Schedule(arrival string, rate, shape float64, n int, seed uint64) ([]time.Duration, error) {
	if rate <= 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
		return nil, fmt.Errorf("request rate %v: must be a positive number", rate)
	}
	r := rand.New(rand.NewPCG(seed, 0x5e7eb3c4))
	var gap func() float64 // in seconds
	mean := 1 / rate
	switch arrival {
	case ArrivalConstant:
		gap = func() float64 { return mean }
	case ArrivalPoisson, "":
		gap = func() float64 { return r.ExpFloat64() * mean }
	case ArrivalGamma:
		if shape <= 0 {
			return nil, fmt.Errorf("gamma burstiness %v: must be positive (1 = Poisson, < 1 burstier)", shape)
		}
		gap = func() float64 { return gammaVariate(r, shape) * mean / shape }
	default:
		return nil, fmt.Errorf("arrival process %q: use poisson, constant or gamma", arrival)
	}
	out := make([]time.Duration, n)
	var t float64
	for i := range out {
		out[i] = time.Duration(t * 1e9)
		t += gap()
	}
	return out, nil
}

// gammaVariate draws from Gamma(shape, 1) by Marsaglia and Tsang's method,
// with the usual boost for shape < 1.
func gammaVariate(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := r.Float64()
		return gammaVariate(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
