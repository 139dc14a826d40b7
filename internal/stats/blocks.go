package stats

import (
	"math"
	"slices"
)

// Blocks bounds the time slices a run is cut into to estimate its
// between-run noise (SlicesSE): at least MinBlocks, so the spread between
// them has some degrees of freedom (a t quantile of 3 df is 3.18, of 7 is
// 2.36), and at most MaxBlocks, since slices longer than a few seconds
// each are what slow drift shows up in.
const (
	MinBlocks = 4
	MaxBlocks = 8
	// MinBlockUnits is the fewest requests a slice holds: fewer, and a
	// slice's median is one or two requests'.
	MinBlockUnits = 20
	// BlockTail is how many values beyond its quantile a slice needs
	// (BlockNeed): with one or two, a tail is whatever stall hit that
	// slice, and the slices' spread says nothing of the run's.
	BlockTail = 5
)

// BlockNeed is how many values each time slice needs for the
// p-quantile: BlockTail beyond it (100 for a p95, 500 for a p99, 10 for a
// median).
func BlockNeed(p float64) int { return BlockTail * MinSamples(p) }

// BlockCount is how many time slices units are cut into (Slices) for a
// statistic needing need values a slice; below MinBlocks the run is too
// short to tell its noise.
func BlockCount(units [][]float64, need int) int {
	values := 0
	for _, u := range units {
		values += len(u)
	}
	return min(MaxBlocks, len(units)/MinBlockUnits, values/max(need, 1))
}

// Slices cuts units, in order, into k contiguous slices of equal count
// and returns each slice's values, sorted, so that several quantiles can
// be read from them.
func Slices(units [][]float64, k int) [][]float64 {
	out := make([][]float64, k)
	for b := range k {
		var vals []float64
		for _, u := range units[b*len(units)/k : (b+1)*len(units)/k] {
			vals = append(vals, u...)
		}
		slices.Sort(vals)
		out[b] = vals
	}
	return out
}

// SlicesSE estimates the standard error of e over one run from the spread
// between its own time slices, already cut and sorted (Slices): the method
// of batch means, se = sd(slice values)/√k. Unlike resampling requests,
// which treats them as independent, it sees whatever drifts or comes in
// bursts over the run (a busy host, a server's batches).
func SlicesSE(sorted [][]float64, e Estimator) (se float64, k int, ok bool) {
	vals := make([]float64, 0, len(sorted))
	for _, s := range sorted {
		v := Mean(s)
		if !e.Mean {
			v = Quantile(s, e.P)
		}
		if !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) < MinBlocks {
		return math.NaN(), len(vals), false
	}
	return StdDev(vals) / math.Sqrt(float64(len(vals))), len(vals), true
}
