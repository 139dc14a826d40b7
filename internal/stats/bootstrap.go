package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultBootstrapIterations is the number of resamples behind an interval:
// at 1,000 the 2.5% and 97.5% points of the bootstrap distribution rest on
// 25 resamples each, enough for their position to settle, and a p95 of a
// few thousand samples is resampled in well under a second.
const DefaultBootstrapIterations = 1000

// DefaultConfidence is the level of the intervals servebench reports.
const DefaultConfidence = 0.95

// BootstrapInterval returns a percentile-bootstrap confidence interval at
// level (e.g. 0.95) for stat over clustered data: groups[g][u] holds the
// values that unit u (a request) of group g (a repeated run) contributed —
// one value for a per-request metric, one per token for inter-token
// latency. Each resample draws len(groups) groups with replacement, then,
// within each drawn group, as many units as it holds, with replacement,
// and applies stat to the concatenation of the drawn units' values (stat
// may reorder its argument). With one group this is the ordinary bootstrap
// over units; with several, run-to-run variation widens the interval as it
// should. The same seed gives the same interval. ok is false when there
// are no values or every resample's statistic is NaN.
func BootstrapInterval(groups [][][]float64, stat func([]float64) float64, level float64, iters int, seed uint64) (lo, hi float64, ok bool) {
	groups = nonEmpty(groups)
	if len(groups) == 0 || iters <= 0 {
		return math.NaN(), math.NaN(), false
	}
	rng := newRNG(seed)
	var buf []float64
	est := make([]float64, 0, iters)
	for range iters {
		buf = resample(rng, groups, buf[:0])
		if len(buf) == 0 {
			continue
		}
		if v := stat(buf); !math.IsNaN(v) {
			est = append(est, v)
		}
	}
	return percentiles(est, level)
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed_b007)) }

func nonEmpty(groups [][][]float64) [][][]float64 {
	return slices.DeleteFunc(slices.Clone(groups), func(g [][]float64) bool { return len(g) == 0 })
}

// resample appends to buf one bootstrap draw of the clustered data: as
// many groups as there are, with replacement (one group is always
// itself), and within each drawn group as many units, with replacement.
func resample(rng *rand.Rand, groups [][][]float64, buf []float64) []float64 {
	for range groups {
		g := groups[pick(rng, len(groups), len(groups) > 1, 0)]
		for range g {
			buf = append(buf, g[rng.IntN(len(g))]...)
		}
	}
	return buf
}

// percentiles is the central level interval of the resampled estimates.
func percentiles(est []float64, level float64) (lo, hi float64, ok bool) {
	if len(est) == 0 {
		return math.NaN(), math.NaN(), false
	}
	slices.Sort(est)
	alpha := (1 - level) / 2
	return Quantile(est, alpha), Quantile(est, 1-alpha), true
}

// pick draws an index below n, or returns fixed when not resampling (one
// group is always itself).
func pick(rng *rand.Rand, n int, resample bool, fixed int) int {
	if !resample {
		return fixed
	}
	return rng.IntN(n)
}

// QuantileOf returns a statistic for BootstrapInterval: the p-quantile
// (type 7) of its argument, which it sorts.
func QuantileOf(p float64) func([]float64) float64 {
	return func(xs []float64) float64 {
		slices.Sort(xs)
		return Quantile(xs, p)
	}
}

// StdDev is the sample standard deviation (n − 1 in the denominator), NaN
// for fewer than two values.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	mean := Mean(xs)
	var s float64
	for _, x := range xs {
		s += (x - mean) * (x - mean)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

// RelStdDev is the sample standard deviation over the mean (the
// coefficient of variation): how much values spread as a fraction of
// their size. 0 for fewer than two values or a mean that is not positive.
func RelStdDev(xs []float64) float64 {
	if m := Mean(xs); len(xs) > 1 && m > 0 {
		return StdDev(xs) / m
	}
	return 0
}

// Mean is the arithmetic mean, NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
