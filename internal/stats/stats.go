// Package stats is servebench's pure math: quantiles with a written
// definition (type 7), distribution summaries and small-sample warnings,
// bootstrap intervals of runs and of the requests in them, block standard
// errors, regressions and the saturation knee. A Sample's quantiles are
// exact up to ExactMax (16,384) values; past that it keeps a sketch whose
// quantiles are within SketchError (0.1%, relative) of the exact ones, with
// count, mean, min and max still exact. It knows nothing of requests or
// tokens; docs/METRICS.md states every definition ("Exact and bounded
// figures" for the sketch).
package stats

import (
	"cmp"
	"math"
	"slices"
)

// Quantiles reported for every distribution, in order. Keys match the JSON
// field names of Dist.
var Quantiles = []struct {
	Key string
	P   float64
}{
	{"p1", 0.01}, {"p5", 0.05}, {"p10", 0.10},
	{"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999},
}

// Quantile returns the p-quantile of sorted (ascending) samples by linear
// interpolation between closest ranks (Hyndman & Fan type 7, NumPy's and R's
// default). It returns NaN for no samples.
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case p <= 0:
		return sorted[0]
	case p >= 1:
		return sorted[n-1]
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= n {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// MinSamples is the least number of samples for which the p-quantile is an
// observed tail rather than an interpolation among the extreme few samples:
// 1/(1−p) for an upper tail, so 20 for p95 and 100 for p99, and 1/p for a
// lower one (20 for p5).
func MinSamples(p float64) int {
	if p < 0.5 {
		p = 1 - p
	}
	if p >= 1 {
		return math.MaxInt
	}
	return int(math.Ceil(1/(1-p) - 1e-9))
}

// Dist summarises a distribution. Quantile fields are nil when Count is 0 so
// that JSON shows null rather than a made-up zero.
type Dist struct {
	Mean *float64 `json:"mean"`
	// Low quantiles matter for speeds: "20 tok/s per user at p95" is the
	// p5 of per-request speed (docs/METRICS.md).
	P1    *float64 `json:"p1"`
	P5    *float64 `json:"p5"`
	P10   *float64 `json:"p10"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P95   *float64 `json:"p95"`
	P99   *float64 `json:"p99"`
	P999  *float64 `json:"p999"`
	Max   *float64 `json:"max"`
	Min   *float64 `json:"min"`
	Count int      `json:"count"`
	// QuantileError is set when the distribution had more than ExactMax
	// observations: each quantile is then within this relative error of
	// the exact value (count, mean, min and max stay exact).
	QuantileError float64 `json:"quantile_rel_error,omitempty"`
}

// Sample accumulates observations. The zero value is ready to use.
type Sample struct {
	xs []float64
	// more holds observations beyond the first sampleBlock, in blocks of
	// that size, until Sorted joins them to xs: a run's millions of
	// inter-token gaps are stored without the copies a growing slice
	// makes (about five times over at append's 1.25x growth).
	more   [][]float64
	sorted bool
	// sk holds the observations once there are more than ExactMax
	// (sketch.go); xs and more are then empty.
	sk *sketch
	// ExactLimit, when positive, is the sample's ExactMax: many small
	// samples (a long run's slices) keep less each.
	ExactLimit int
}

// sampleBlock is the size of xs before blocks, and of each block.
const sampleBlock = 2048

// Add records one observation; NaN and infinities are ignored because they
// come only from undefined ratios (e.g. a zero-length interval).
func (s *Sample) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	if s.sk != nil {
		s.sk.add(x)
		return
	}
	if limit := cmp.Or(s.ExactLimit, ExactMax); s.Len() >= limit {
		s.fold()
		s.sk.add(x)
		return
	}
	s.sorted = false
	if len(s.more) == 0 && len(s.xs) < sampleBlock {
		s.xs = append(s.xs, x)
		return
	}
	if n := len(s.more); n == 0 || len(s.more[n-1]) == sampleBlock {
		s.more = append(s.more, make([]float64, 0, sampleBlock))
	}
	last := &s.more[len(s.more)-1]
	*last = append(*last, x)
}

// fold moves the observations into a sketch and lets them go.
func (s *Sample) fold() {
	s.sk = newSketch()
	for _, x := range s.xs {
		s.sk.add(x)
	}
	for _, b := range s.more {
		for _, x := range b {
			s.sk.add(x)
		}
	}
	s.xs, s.more = nil, nil
}

// Merge adds o's observations to s; o is unchanged.
func (s *Sample) Merge(o *Sample) {
	if o.sk == nil {
		for _, x := range o.xs {
			s.Add(x)
		}
		for _, b := range o.more {
			for _, x := range b {
				s.Add(x)
			}
		}
		return
	}
	if s.sk == nil {
		s.fold()
	}
	s.sk.merge(o.sk)
}

// Exact reports whether the sample still holds every observation, so that
// its quantiles are exact (at most ExactMax of them).
func (s *Sample) Exact() bool { return s.sk == nil }

// Len returns the number of observations.
func (s *Sample) Len() int {
	if s.sk != nil {
		return s.sk.n
	}
	n := len(s.xs)
	for _, b := range s.more {
		n += len(b)
	}
	return n
}

// Sorted returns the observations in ascending order (shared, do not
// modify); nil once the sample is sketched (Exact is false).
func (s *Sample) Sorted() []float64 {
	if s.sk != nil {
		return nil
	}
	if len(s.more) > 0 {
		all := make([]float64, 0, s.Len())
		all = append(all, s.xs...)
		for _, b := range s.more {
			all = append(all, b...)
		}
		s.xs, s.more = all, nil
	}
	if !s.sorted {
		slices.Sort(s.xs)
		s.sorted = true
	}
	return s.xs
}

// Quantile returns the p-quantile (type 7) of the observations, within
// SketchError of it once the sample is sketched.
func (s *Sample) Quantile(p float64) float64 {
	if s.sk != nil {
		return s.sk.quantile(s.sk.ordered(), p)
	}
	return Quantile(s.Sorted(), p)
}

// FractionAtMost returns the fraction of observations ≤ x; once the
// sample is sketched, of those whose bucket is reported at or below x.
func (s *Sample) FractionAtMost(x float64) float64 {
	if s.sk != nil {
		var n int64
		for _, b := range s.sk.ordered() {
			if b.v <= x {
				n += b.n
			}
		}
		return float64(n) / float64(s.sk.n)
	}
	xs := s.Sorted()
	if len(xs) == 0 {
		return math.NaN()
	}
	i, _ := slices.BinarySearch(xs, math.Nextafter(x, math.Inf(1)))
	return float64(i) / float64(len(xs))
}

// Summary computes the Dist of the observations.
func (s *Sample) Summary() Dist {
	if s.sk != nil {
		return s.sk.summary()
	}
	xs := s.Sorted()
	d := Dist{Count: len(xs)}
	if len(xs) == 0 {
		return d
	}
	ptr := func(v float64) *float64 { return &v }
	d.Mean, d.Min, d.Max = ptr(Mean(xs)), ptr(xs[0]), ptr(xs[len(xs)-1])
	for _, q := range Quantiles {
		*d.field(q.Key) = ptr(Quantile(xs, q.P))
	}
	return d
}

// Get returns the named statistic ("mean", "p1", ..., "p999", "max", "min") and
// whether it exists.
func (d Dist) Get(key string) (float64, bool) {
	p := d.field(key)
	if p == nil || *p == nil {
		return math.NaN(), false
	}
	return **p, true
}

// field is the field holding the named statistic, nil for an unknown name.
func (d *Dist) field(key string) **float64 {
	switch key {
	case "mean":
		return &d.Mean
	case "p1":
		return &d.P1
	case "p5":
		return &d.P5
	case "p10":
		return &d.P10
	case "p50":
		return &d.P50
	case "p90":
		return &d.P90
	case "p95":
		return &d.P95
	case "p99":
		return &d.P99
	case "p999":
		return &d.P999
	case "max":
		return &d.Max
	case "min":
		return &d.Min
	}
	return nil
}

// ThinTails returns those of the given quantile keys ("p95", "p5", ...) of
// a distribution that have too few samples behind them (see MinSamples).
func ThinTails(d Dist, keys ...string) []string {
	if d.Count == 0 {
		return nil
	}
	var out []string
	for _, q := range Quantiles {
		if slices.Contains(keys, q.Key) && d.Count < MinSamples(q.P) {
			out = append(out, q.Key)
		}
	}
	return out
}
