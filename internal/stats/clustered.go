package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// Estimator is a statistic that a resample's weights determine without
// copying or sorting it: the P-quantile (type 7, as Quantile) or, with
// Mean, the mean.
type Estimator struct {
	P    float64
	Mean bool
}

// Of computes the estimator on values (which it may reorder).
func (e Estimator) Of(xs []float64) float64 {
	if e.Mean {
		return Mean(xs)
	}
	return QuantileOf(e.P)(xs)
}

// Clustered is clustered data (groups of units of values, as
// BootstrapInterval takes them) prepared for fast resampling: every value
// sorted once, with the unit it came from. A resample is then a weight per
// unit (how often it was drawn), and a quantile of the resample is found
// by walking the sorted values from the original quantile's position, so
// that no resample is copied or sorted (DiffIntervals).
type Clustered struct {
	groups [][2]int  // each group's units: [first, end)
	sorted []float64 // every value, ascending
	unitOf []int32   // the unit of each sorted value
	sizes  []int32   // values per unit
	sums   []float64 // the sum of each unit's values
	n      int       // values in all
}

// NewClustered prepares groups for resampling; empty groups are dropped,
// as BootstrapInterval drops them.
func NewClustered(groups [][][]float64) *Clustered {
	c := &Clustered{}
	type tagged struct {
		v float64
		u int32
	}
	var all []tagged
	for _, g := range nonEmpty(groups) {
		first := len(c.sizes)
		for _, unit := range g {
			u := int32(len(c.sizes))
			s := 0.0
			for _, v := range unit {
				all = append(all, tagged{v, u})
				s += v
			}
			c.sizes, c.sums = append(c.sizes, int32(len(unit))), append(c.sums, s)
		}
		c.groups = append(c.groups, [2]int{first, len(c.sizes)})
	}
	slices.SortFunc(all, func(a, b tagged) int { return cmp.Compare(a.v, b.v) })
	c.sorted, c.unitOf = make([]float64, len(all)), make([]int32, len(all))
	for i, t := range all {
		c.sorted[i], c.unitOf[i] = t.v, t.u
	}
	c.n = len(all)
	return c
}

// resampler reads an estimator from weights over a Clustered.
type resampler struct {
	c *Clustered
	e Estimator
	// anchor is the sorted position of the estimator on the original data;
	// before[u] counts unit u's values below it, so the resample's weight
	// below the anchor is Σ w[u]·before[u], with no walk from the start.
	anchor int
	before []int32
}

func newResampler(c *Clustered, e Estimator) *resampler {
	r := &resampler{c: c, e: e}
	if e.Mean || c.n == 0 {
		return r
	}
	r.anchor = min(int(float64(c.n-1)*min(max(e.P, 0), 1)), c.n-1)
	r.before = make([]int32, len(c.sizes))
	for _, u := range c.unitOf[:r.anchor] {
		r.before[u]++
	}
	return r
}

// draw fills w with one resample of the units of groups: as many groups
// as there are, with replacement, then in each drawn group as many units,
// with replacement, as resample draws them.
func draw(rng *rand.Rand, groups [][2]int, w []int32) {
	clear(w)
	for range groups {
		g := groups[pick(rng, len(groups), len(groups) > 1, 0)]
		n := g[1] - g[0]
		for range n {
			w[g[0]+rng.IntN(n)]++
		}
	}
}

// estimate is the estimator on the resample that drew unit u w[u] times.
// Its loops run over every unit without a branch: most weights are 0, 1
// or 2 at random, which a branch would mispredict.
func (r *resampler) estimate(w []int32) float64 {
	sizes := r.c.sizes[:len(w)]
	if r.e.Mean {
		var total int64
		var sum float64
		sums := r.c.sums[:len(w)]
		for u, wu := range w {
			total += int64(wu) * int64(sizes[u])
			sum += float64(wu) * sums[u]
		}
		if total == 0 {
			return math.NaN()
		}
		return sum / float64(total)
	}
	var total, weight int64
	before := r.before[:len(w)]
	for u, wu := range w {
		total += int64(wu) * int64(sizes[u])
		weight += int64(wu) * int64(before[u])
	}
	if total == 0 {
		return math.NaN()
	}
	p := min(max(r.e.P, 0), 1)
	h := float64(total-1) * p
	k := int(math.Floor(h))
	j, below := r.walk(w, r.anchor, int(weight), k)
	x := r.c.sorted[j]
	if k+1 >= int(total) || h == float64(k) {
		return x
	}
	j, _ = r.walk(w, j, below, k+1)
	return x + (h-float64(k))*(r.c.sorted[j]-x)
}

// walk finds the sorted position of the resample's k-th value (0-based),
// from position j with weight below values below it.
func (r *resampler) walk(w []int32, j, below, k int) (int, int) {
	unit := r.c.unitOf
	for below > k {
		j--
		below -= int(w[unit[j]])
	}
	for below+int(w[unit[j]]) <= k {
		below += int(w[unit[j]])
		j++
	}
	return j, below
}

// Interval is a confidence interval; OK is false when there is none.
type Interval struct {
	Lo, Hi float64
	OK     bool
}

// DiffIntervals is the bootstrap interval of a difference, B − A, each
// side drawn as BootstrapInterval draws its groups, of several statistics
// at once: a[i] and b[i] are the values statistic es[i] reads from the
// same units (requests) of A and B, a unit empty where it gave that
// statistic no value, so that one resample of the units serves every
// statistic. Each interval is the one a plain bootstrap of the difference
// gives for that statistic alone (the tests' reference; exactly, for a
// quantile of data without empty units), and the units are drawn once.
// Every a[i] must have the units of a[0], and every b[i] those of b[0].
func DiffIntervals(a, b []*Clustered, es []Estimator, level float64, iters int, seed uint64) []Interval {
	out := make([]Interval, len(es))
	if len(es) == 0 || iters <= 0 {
		return out
	}
	mustShare(a)
	mustShare(b)
	rng := newRNG(seed)
	ra, rb := make([]*resampler, len(es)), make([]*resampler, len(es))
	est := make([][]float64, len(es))
	for i, e := range es {
		ra[i], rb[i] = newResampler(a[i], e), newResampler(b[i], e)
		est[i] = make([]float64, 0, iters)
	}
	// The units are drawn in order, a batch of resamples at a time; the
	// statistics then read the batch in parallel, each in resample order,
	// so the intervals do not depend on how many cores there are.
	wa, wb := weights(min(iters, batch), len(a[0].sizes)), weights(min(iters, batch), len(b[0].sizes))
	for start := 0; start < iters; start += batch {
		n := min(batch, iters-start)
		for k := range n {
			draw(rng, a[0].groups, wa[k])
			draw(rng, b[0].groups, wb[k])
		}
		parallel(len(es), func(i int) {
			for k := range n {
				if d := rb[i].estimate(wb[k]) - ra[i].estimate(wa[k]); !math.IsNaN(d) {
					est[i] = append(est[i], d)
				}
			}
		})
	}
	for i := range es {
		out[i].Lo, out[i].Hi, out[i].OK = percentiles(est[i], level)
	}
	return out
}

// batch is how many resamples are drawn before the statistics read them:
// enough to keep every core busy between draws, few enough that the
// weights of two runs of 10,000 requests take a few megabytes.
const batch = 32

func weights(n, units int) [][]int32 {
	w := make([][]int32, n)
	for i := range w {
		w[i] = make([]int32, units)
	}
	return w
}

// parallel runs f(0) … f(n−1) on as many goroutines as there are cores.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	wg.Wait()
}

// mustShare checks that data resampled together have the same units.
func mustShare(cs []*Clustered) {
	for _, c := range cs[1:] {
		if !slices.Equal(c.groups, cs[0].groups) {
			panic("stats.DiffIntervals: statistics of one side with different units")
		}
	}
}
