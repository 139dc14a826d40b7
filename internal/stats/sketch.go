package stats

import (
	"math"
	"slices"
)

// A Sample keeps its observations exactly up to ExactMax of them, so that
// every quantile is the exact type-7 value (Quantile). Past that, it folds
// them into a sketch: counts in logarithmic buckets whose width bounds the
// relative error of every quantile by SketchError, with count, mean, min
// and max still exact. A long run's millions of inter-token gaps then cost
// a few thousand counters instead of eight bytes each, so a client's memory
// does not grow with the length of the run (docs/METRICS.md, "Exact and
// bounded figures").
const (
	// ExactMax is the most observations a Sample keeps one by one: 128 KiB
	// of them, more requests than most load points send. A soak of a
	// thousand streams reaches it within its first minute, so that what
	// it keeps after that minute no longer grows (a limit of 65,536 grew
	// a dozen per-request figures by 4 MB after it, 15% of the client's
	// memory once the garbage collector's headroom is counted).
	ExactMax = 1 << 14
	// SketchError bounds the relative error of a quantile of a sketched
	// Sample: the value reported is within 0.1% of the exact one (50 µs of a
	// 50 ms gap), finer than a server's run-to-run noise.
	SketchError = 0.001
)

// sketchGamma is the ratio of consecutive bucket bounds: a bucket
// (γ^(k−1), γ^k] is reported as 2γ^k/(γ+1), within SketchError of any
// value in it.
var (
	sketchGamma  = (1 + SketchError) / (1 - SketchError)
	sketchLogGam = math.Log(sketchGamma)
)

// sketch is a Sample past ExactMax observations.
type sketch struct {
	n        int
	sum, c   float64 // Kahan-compensated sum, for the mean
	min, max float64
	zero     int             // observations equal to 0
	pos, neg map[int32]int64 // bucket counts of positive values and of negated negative ones
}

func newSketch() *sketch {
	return &sketch{min: math.Inf(1), max: math.Inf(-1), pos: map[int32]int64{}, neg: map[int32]int64{}}
}

func (k *sketch) add(x float64) {
	k.n++
	y := x - k.c
	t := k.sum + y
	k.c = (t - k.sum) - y
	k.sum = t
	k.min, k.max = min(k.min, x), max(k.max, x)
	switch {
	case x > 0:
		k.pos[bucketOf(x)]++
	case x < 0:
		k.neg[bucketOf(-x)]++
	default:
		k.zero++
	}
}

// bucketOf is the index k of the bucket (γ^(k−1), γ^k] holding x > 0.
func bucketOf(x float64) int32 {
	return int32(math.Ceil(math.Log(x) / sketchLogGam))
}

// bucketValue is what a bucket's observations are reported as.
func bucketValue(k int32) float64 {
	return 2 * math.Pow(sketchGamma, float64(k)) / (sketchGamma + 1)
}

// bucket is a run of equal reported values, in ascending order.
type bucket struct {
	v float64
	n int64
}

// ordered returns the buckets in ascending order of value.
func (k *sketch) ordered() []bucket {
	out := make([]bucket, 0, len(k.neg)+len(k.pos)+1)
	keys := func(m map[int32]int64) []int32 {
		ks := make([]int32, 0, len(m))
		for i := range m {
			ks = append(ks, i)
		}
		slices.Sort(ks)
		return ks
	}
	neg := keys(k.neg)
	for i := len(neg) - 1; i >= 0; i-- {
		out = append(out, bucket{-bucketValue(neg[i]), k.neg[neg[i]]})
	}
	if k.zero > 0 {
		out = append(out, bucket{0, int64(k.zero)})
	}
	for _, i := range keys(k.pos) {
		out = append(out, bucket{bucketValue(i), k.pos[i]})
	}
	return out
}

// rankIn returns the value of the r-th smallest observation (from 0), as
// its bucket reports it, kept within the exact min and max.
func rankIn(bs []bucket, r int64, lo, hi float64) float64 {
	for _, b := range bs {
		if r < b.n {
			return min(max(b.v, lo), hi)
		}
		r -= b.n
	}
	return hi
}

// quantile is Quantile's type-7 interpolation over the sketch's ranks.
func (k *sketch) quantile(bs []bucket, p float64) float64 {
	switch {
	case k.n == 0:
		return math.NaN()
	case p <= 0:
		return k.min
	case p >= 1:
		return k.max
	}
	h := float64(k.n-1) * p
	lo := int64(math.Floor(h))
	if lo+1 >= int64(k.n) {
		return k.max
	}
	a, b := rankIn(bs, lo, k.min, k.max), rankIn(bs, lo+1, k.min, k.max)
	return a + (h-float64(lo))*(b-a)
}

func (k *sketch) summary() Dist {
	d := Dist{Count: k.n, QuantileError: SketchError}
	ptr := func(v float64) *float64 { return &v }
	d.Mean, d.Min, d.Max = ptr(k.sum/float64(k.n)), ptr(k.min), ptr(k.max)
	bs := k.ordered()
	for _, q := range Quantiles {
		*d.field(q.Key) = ptr(k.quantile(bs, q.P))
	}
	return d
}

func (k *sketch) merge(o *sketch) {
	k.n += o.n
	k.zero += o.zero
	y := o.sum - k.c
	t := k.sum + y
	k.c = (t - k.sum) - y
	k.sum = t
	k.min, k.max = min(k.min, o.min), max(k.max, o.max)
	for i, c := range o.pos {
		k.pos[i] += c
	}
	for i, c := range o.neg {
		k.neg[i] += c
	}
}
