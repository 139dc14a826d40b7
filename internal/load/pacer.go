// Package load owns when requests are sent: open-loop pacers that turn a
// request rate into a precomputed, seeded schedule, and closed loops of
// virtual users. It emits one record per request sent and never drops one.
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

// Arrival is an open-loop arrival process: how the gaps between requests
// are drawn. The zero value is Poisson.
type Arrival struct {
	Process string  // ArrivalPoisson (or ""), ArrivalConstant, ArrivalGamma
	Shape   float64 // gamma shape (burstiness): 1 = Poisson, < 1 burstier; ignored by the others
}

// ParseArrival checks an arrival process given by name and burstiness, as
// the command line gives them, and returns it.
func ParseArrival(process string, burstiness float64) (Arrival, error) {
	a := Arrival{Process: process, Shape: burstiness}
	return a, a.Validate()
}

// Validate reports an arrival process that cannot pace requests.
func (a Arrival) Validate() error {
	switch a.Process {
	case ArrivalPoisson, ArrivalConstant, "":
		return nil
	case ArrivalGamma:
		if !(a.Shape > 0) || math.IsInf(a.Shape, 0) {
			return fmt.Errorf("gamma burstiness %v: must be a positive number (1 = Poisson, below 1 burstier)", a.Shape)
		}
		return nil
	}
	return fmt.Errorf("arrival process %q: use poisson, constant or gamma", a.Process)
}

// gaps returns a generator of random inter-arrival gaps in seconds for
// the rate: exponential (Poisson) or gamma.
func (a Arrival) gaps(rate float64, r *rand.Rand) func() float64 {
	mean := 1 / rate
	if a.Process == ArrivalGamma {
		return func() float64 { return gammaVariate(r, a.Shape) * mean / a.Shape }
	}
	return func() float64 { return r.ExpFloat64() * mean }
}

// Schedule returns n arrival offsets from the start of a load point for the
// given rate (requests per second). The first arrival is at 0. The schedule
// depends only on its arguments, so a seed reproduces it.
func (a Arrival) Schedule(rate float64, n int, seed uint64) ([]time.Duration, error) {
	if rate <= 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
		return nil, fmt.Errorf("request rate %v: must be a positive number", rate)
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	out := make([]time.Duration, n)
	if a.Process == ArrivalConstant {
		// i/rate, not a running sum of gaps: no rounding drift however long
		// the point.
		for i := range out {
			out[i] = time.Duration(math.Round(float64(i) * 1e9 / rate))
		}
		return out, nil
	}
	gap := a.gaps(rate, rand.New(rand.NewPCG(seed, 0x5e7eb3c4)))
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
