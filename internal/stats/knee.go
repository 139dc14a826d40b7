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

// Slope is the least-squares slope of ys against xs (NaN for fewer than
// two points or no spread in xs).
func Slope(xs, ys []float64) float64 {
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
