package stats

import "math"

// DefaultSaturationGain is the share of a load increase that aggregate
// throughput must keep up with for the load not to count as saturated: a
// doubling of load that buys less than 20% more throughput is not worth
// the latency it costs. docs/METRICS.md (Saturation) states the rule.
const DefaultSaturationGain = 0.2

// Saturation finds the knee of a load sweep. loads must be ascending and
// positive; throughput and latency are measured at each load. It returns
// the index i of the lowest load such that at every higher load j
//
//	throughput[j] < throughput[i] · (1 + gain · (loads[j]/loads[i] − 1))
//	latency[j]    > latency[i]
//
// that is, beyond loads[i] throughput grows by less than gain times the
// proportional growth of load while latency keeps rising. ok is false
// when no load qualifies (the sweep never saturated) or fewer than two
// loads were measured. Points with a non-positive or NaN throughput are
// skipped as candidates.
func Saturation(loads, throughput, latency []float64, gain float64) (i int, ok bool) {
	n := min(len(loads), len(throughput), len(latency))
	for i = 0; i+1 < n; i++ {
		if !(throughput[i] > 0) || !(loads[i] > 0) {
			continue
		}
		if saturatedAt(i, n, loads, throughput, latency, gain) {
			return i, true
		}
	}
	return -1, false
}

func saturatedAt(i, n int, loads, throughput, latency []float64, gain float64) bool {
	for j := i + 1; j < n; j++ {
		allowed := throughput[i] * (1 + gain*(loads[j]/loads[i]-1))
		if !(throughput[j] < allowed) || !(latency[j] > latency[i]) {
			return false
		}
	}
	return true
}

// SlopeAcc is the least-squares slope of y against x taken as the points
// come, in constant memory: the means and co-moments updated one point at
// a time (Welford), from the first point (the slope does not depend on
// where x and y start, and small numbers keep their digits), equal to the
// two-pass formula but for rounding. The zero value is empty.
type SlopeAcc struct {
	n                int
	x0, y0           float64
	mx, my, sxy, sxx float64
	minX, maxX       float64
}

// Add takes the point (x, y).
func (a *SlopeAcc) Add(x, y float64) {
	a.n++
	if a.n == 1 {
		a.minX, a.maxX, a.x0, a.y0 = x, x, x, y
	}
	a.minX, a.maxX = min(a.minX, x), max(a.maxX, x)
	x, y = x-a.x0, y-a.y0
	dx := x - a.mx
	a.mx += dx / float64(a.n)
	a.my += (y - a.my) / float64(a.n)
	a.sxy += dx * (y - a.my)
	a.sxx += dx * (x - a.mx)
}

// N is the number of points taken.
func (a *SlopeAcc) N() int { return a.n }

// SpanX is the largest x taken less the smallest.
func (a *SlopeAcc) SpanX() float64 { return a.maxX - a.minX }

// Slope is the least-squares slope of the points taken; NaN with fewer
// than two, or with every x equal.
func (a *SlopeAcc) Slope() float64 {
	if a.n < 2 || a.sxx == 0 {
		return math.NaN()
	}
	return a.sxy / a.sxx
}
