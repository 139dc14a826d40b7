package stats

import "math"

// The reference forms the tests hold the product's code to: the plain
// bootstrap of a difference that the fast resampler (DiffIntervals) must
// reproduce draw for draw, and the time slices' standard error in one call.

// BootstrapDiffInterval is BootstrapInterval of a difference: each
// resample draws a and b independently (each as BootstrapInterval draws
// its groups) and takes stat(b) − stat(a), so the interval of the change
// from a to b carries the noise of both. ok is false when either side has
// no values or no resample gives a number.
func BootstrapDiffInterval(a, b [][][]float64, stat func([]float64) float64, level float64, iters int, seed uint64) (lo, hi float64, ok bool) {
	a, b = nonEmpty(a), nonEmpty(b)
	if len(a) == 0 || len(b) == 0 || iters <= 0 {
		return math.NaN(), math.NaN(), false
	}
	rng := newRNG(seed)
	var bufA, bufB []float64
	est := make([]float64, 0, iters)
	for range iters {
		bufA, bufB = resample(rng, a, bufA[:0]), resample(rng, b, bufB[:0])
		if len(bufA) == 0 || len(bufB) == 0 {
			continue
		}
		if d := stat(bufB) - stat(bufA); !math.IsNaN(d) {
			est = append(est, d)
		}
	}
	return percentiles(est, level)
}

// Len is the number of values.
func (c *Clustered) Len() int { return c.n }

// Groups is the number of non-empty groups.
func (c *Clustered) Groups() int { return len(c.groups) }

// Value is the estimator on the data as they are (every unit once).
func (c *Clustered) Value(e Estimator) float64 {
	if c.n == 0 {
		return math.NaN()
	}
	if e.Mean {
		return sumOf(c.sums) / float64(c.n)
	}
	return Quantile(c.sorted, e.P)
}

func sumOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// BlockSE estimates the standard error of e over one run from the spread
// between its own time slices (the method of batch means): the run's
// units, in the order they were recorded, are cut into k contiguous blocks
// of equal count, e is computed on each, and se = sd(block values)/√k.
// A block needs MinBlockUnits units and need values (a p99 needs 100 to be
// a tail, not the maximum), so k = min(MaxBlocks, units/MinBlockUnits,
// values/need); ok is false when k < MinBlocks: the run is too short to
// tell its noise. Unlike resampling
// requests, which treats them as independent, this sees whatever drifts
// or comes in bursts over the run (a busy host, a server's batches), so a
// change must rise above the run's own slow variation to be called.
func BlockSE(units [][]float64, e Estimator, need int) (se float64, k int, ok bool) {
	k = BlockCount(units, need)
	if k < MinBlocks {
		return math.NaN(), k, false
	}
	return SlicesSE(Slices(units, k), e)
}
