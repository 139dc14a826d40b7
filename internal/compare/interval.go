package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
)

// intervals adds every change's interval at l and judges it. Per-request
// statistics are bootstrapped over runs, then requests within them, all
// from the same resamples of requests; a side of one run cannot show how
// runs differ, so its own time slices stand in (noiseBand): the interval
// is widened to the band they give, or the verdict is unknown when the run
// is too short to slice. Aggregate throughput varies only between runs.
func (p *Point) intervals(a, b *Side, opt Options) {
	var idx []int
	var ca, cb []*stats.Clustered
	var es []stats.Estimator
	req := map[string]*perRequest{} // by metric: its percentiles share the values
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Diff == nil {
			continue
		}
		if !c.stat.PerRequest() {
			c.throughputInterval(p.Load, a, b, opt)
			continue
		}
		r := req[c.stat.Metric]
		if r == nil {
			r = &perRequest{a: a.Eval.Requests(p.Load, c.stat), b: b.Eval.Requests(p.Load, c.stat)}
			r.ca, r.cb = stats.NewClustered(r.a), stats.NewClustered(r.b)
			req[c.stat.Metric] = r
		}
		est, _ := c.stat.Estimator()
		idx, es = append(idx, i), append(es, est)
		ca, cb = append(ca, r.ca), append(cb, r.cb)
	}
	cis := stats.DiffIntervals(ca, cb, es, opt.Confidence, opt.Iterations, opt.Seed)
	for k, i := range idx {
		c := &p.Changes[i]
		var band *NoiseEstimate
		why := ""
		if cis[k].OK {
			r := req[c.stat.Metric]
			band, why = noiseBand(es[k], r, opt.Confidence)
		}
		c.judge(cis[k], band, why, opt.Confidence)
	}
}

// Keep is the most requests of a run a side keeps for the intervals
// (slo.Evaluator.Keep): every run of up to ExactMax requests is resampled
// whole, as its summary's quantiles are exact; a longer one from every
// s-th request it recorded, in order, so that compare reads records files
// larger than memory. Its intervals are then those of the sample, wider
// than the whole run's would be (thinNote says so).
const Keep = stats.ExactMax

// keptNote says which sides' intervals rest on a sample of their requests.
func keptNote(l record.Load, a, b *Side) string {
	var parts []string
	for _, s := range []struct {
		name string
		side *Side
	}{{"A", a}, {"B", b}} {
		if kept, all := s.side.Eval.Kept(l); kept < all {
			parts = append(parts, fmt.Sprintf("%s from %d of its %d requests", s.name, kept, all))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "intervals from an evenly spaced sample of each long run's requests (" + strings.Join(parts, ", ") +
		"): wider than the whole runs' would be, so a change they call stands and a small one may show as noise"
}

// perRequest is a metric's values on both sides, request by request, as
// the intervals resample them.
type perRequest struct {
	a, b   [][][]float64
	ca, cb *stats.Clustered
	// slicesA and slicesB are a one-run side's time slices, sorted, by
	// their count: the metric's percentiles read the same slices.
	slicesA, slicesB map[int][][]float64
}

// throughputInterval is the interval of aggregate throughput: one number
// per run, so only repeats on both sides give it one.
func (c *Change) throughputInterval(l record.Load, a, b *Side, opt Options) {
	ga, gb := perRun(a, l, c.stat), perRun(b, l, c.stat)
	if len(ga) < 2 || len(gb) < 2 {
		c.judge(stats.Interval{}, nil, fmt.Sprintf("%s; repeat to know: %s is one number per run, so only repeats (run --repeat N) give it an interval", OneRun(len(ga), len(gb)), c.Metric), opt.Confidence)
		return
	}
	mean := []stats.Estimator{{Mean: true}}
	ci := stats.DiffIntervals([]*stats.Clustered{stats.NewClustered(ga)}, []*stats.Clustered{stats.NewClustered(gb)}, mean, opt.Confidence, opt.Iterations, opt.Seed)
	c.judge(ci[0], &NoiseEstimate{Source: FromRuns, RunsA: len(ga), RunsB: len(gb)}, "", opt.Confidence)
}

// judge reads the change from its request interval ci and the noise band:
// the interval reported is the wider of the two; why, when set, says why
// nothing can be called.
func (c *Change) judge(ci stats.Interval, band *NoiseEstimate, why string, level float64) {
	c.Noise = band
	if !ci.OK || why != "" {
		c.Verdict = Unknown
		if *c.Diff == 0 {
			c.Verdict = NoChange
		}
		c.Why = joinWhy(c.Why, why)
		return
	}
	lo, hi := ci.Lo, ci.Hi
	if band != nil {
		lo, hi = min(lo, *c.Diff-band.Band), max(hi, *c.Diff+band.Band)
	}
	// A percentile interval of a tail from few values can miss the
	// difference measured; it is widened to contain it.
	lo, hi = min(lo, *c.Diff), max(hi, *c.Diff)
	c.CI = &slo.Interval{Low: lo, High: hi, Level: level}
	c.Verdict = judge(lo, hi, c.HigherIsBetter)
}

// perRun is each run's own value of a one-number statistic at l (its
// aggregate output throughput), one group per run that measured it.
func perRun(s *Side, l record.Load, st slo.Statistic) [][][]float64 {
	var g [][][]float64
	for i := range s.Summary.Points {
		p := &s.Summary.Points[i]
		if v, _ := st.Value(p); p.Load == l && !math.IsNaN(v) {
			g = append(g, [][]float64{{v}})
		}
	}
	return g
}

// judge reads an interval of B − A: wholly on one side of 0 is a change,
// containing 0 is noise.
func judge(lo, hi float64, higherIsBetter bool) string {
	switch {
	case lo == 0 && hi == 0:
		return NoChange // every resample alike: e.g. no errors on either side
	case lo > 0:
		return map[bool]string{true: Better, false: Worse}[higherIsBetter]
	case hi < 0:
		return map[bool]string{true: Worse, false: Better}[higherIsBetter]
	}
	return Noise
}

func joinWhy(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// thinMetrics names a point's statistics that rest on too few values.
func thinMetrics(cs []Change) string {
	var thin []string
	for _, c := range cs {
		if c.Thin {
			thin = append(thin, fmt.Sprintf("%s (%d/%d of %d)", c.Metric, c.SamplesA, c.SamplesB, c.stat.MinSamples()))
		}
	}
	if len(thin) == 0 {
		return ""
	}
	return "too few values for " + strings.Join(thin, ", ") +
		": those statistics interpolate among the extreme few; their intervals are wide and their changes are weak evidence (measure more requests)"
}

// matchNotes says plainly what could not be matched.
func matchNotes(r *Result, la, lb []record.Load) []string {
	var notes []string
	wa, wb := workloads(la), workloads(lb)
	if !slices.Equal(wa, wb) {
		notes = append(notes, fmt.Sprintf("different workloads: A measured %s, B measured %s", cells(wa), cells(wb)))
	}
	if len(r.Points) == 0 {
		notes = append(notes, fmt.Sprintf("no common load points: A measured %s, B measured %s; nothing can be compared", labels(la), labels(lb)))
		return notes
	}
	if len(r.OnlyA) > 0 {
		notes = append(notes, "measured by A only, not compared: "+labels(r.OnlyA))
	}
	if len(r.OnlyB) > 0 {
		notes = append(notes, "measured by B only, not compared: "+labels(r.OnlyB))
	}
	return notes
}

// workloads are the distinct workload cells of some loads, in order.
func workloads(ls []record.Load) []string {
	var w []string
	for _, l := range ls {
		if !slices.Contains(w, l.Workload) {
			w = append(w, l.Workload)
		}
	}
	slices.Sort(w)
	return w
}

func cells(w []string) string {
	if len(w) == 1 && w[0] == "" {
		return "one workload (no matrix)"
	}
	q := make([]string, len(w))
	for i, c := range w {
		q[i] = strconv.Quote(c)
		if c == "" {
			q[i] = "the run's single workload"
		}
	}
	return strings.Join(q, ", ")
}

func labels(ls []record.Load) string {
	if len(ls) == 0 {
		return "nothing"
	}
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.Label()
	}
	return strings.Join(s, ", ")
}

func itoa(n int) string { return strconv.Itoa(n) }

// NoiseEstimate is where a change's interval took its between-run noise from.
type NoiseEstimate struct {
	// Source is "runs" when both sides have repeats (the bootstrap over
	// runs carries their spread), else "time slices": a side of one run is
	// cut into Slices contiguous slices and their spread stands in for
	// the spread between runs (stats.SlicesSE).
	Source  string `json:"source"`
	RunsA   int    `json:"runs_a"`
	RunsB   int    `json:"runs_b"`
	SlicesA int    `json:"slices_a,omitempty"`
	SlicesB int    `json:"slices_b,omitempty"`
	// SE is the standard error of B − A from the slices (and the runs of a
	// side with repeats), in the metric's unit; Band is the half-width it
	// gives at the interval's level, t·SE: no change smaller is called.
	SE   float64 `json:"se"`
	Band float64 `json:"band"`
}

// Sources of the noise behind an interval (NoiseEstimate.Source).
const (
	FromRuns   = "runs"
	FromSlices = "time slices"
)

// noiseBand estimates the between-run noise of B − A when a side has one
// run: that side's time slices, the other's runs or slices; when both
// sides have repeats, the bootstrap over runs carries it and the band is
// 0. why is set when a side is too short to slice, so nothing can be
// called.
func noiseBand(est stats.Estimator, r *perRequest, level float64) (*NoiseEstimate, string) {
	ga, gb := r.a, r.b
	if len(ga) > 1 && len(gb) > 1 {
		return &NoiseEstimate{Source: FromRuns, RunsA: len(ga), RunsB: len(gb)}, "" // the bootstrap over runs carries it
	}
	n := &NoiseEstimate{Source: FromSlices, RunsA: len(ga), RunsB: len(gb)}
	need := 1
	if !est.Mean {
		need = stats.BlockNeed(est.P)
	}
	if r.slicesA == nil {
		r.slicesA, r.slicesB = map[int][][]float64{}, map[int][][]float64{}
	}
	seA, dfA, okA := sideSE(ga, est, need, r.slicesA, &n.SlicesA)
	seB, dfB, okB := sideSE(gb, est, need, r.slicesB, &n.SlicesB)
	if !okA || !okB {
		short := map[[2]bool]string{{false, true}: "A's run is", {true, false}: "B's run is", {false, false}: "both runs are"}[[2]bool{okA, okB}]
		each := fmt.Sprintf("%d requests", stats.MinBlockUnits)
		if need > stats.MinBlockUnits {
			each += fmt.Sprintf(" and %d values", need)
		}
		return nil, fmt.Sprintf("%s; repeat to know: %s too short to cut into %d time slices of %s each, so its noise between runs cannot be estimated",
			OneRun(len(ga), len(gb)), short, stats.MinBlocks, each)
	}
	n.SE = math.Hypot(seA, seB)
	if n.SE > 0 {
		// Welch–Satterthwaite degrees of freedom of the two sides' sum.
		df := math.Pow(n.SE, 4) / (math.Pow(seA, 4)/dfA + math.Pow(seB, 4)/dfB)
		n.Band = stats.TQuantile(1-(1-level)/2, df) * n.SE
	}
	return n, ""
}

// sideSE is the standard error of a side's statistic between runs, with
// its degrees of freedom: from its runs' own values when it has several,
// else from its one run's time slices (counted in slices; cut once per
// count, in cut).
func sideSE(g [][][]float64, est stats.Estimator, need int, cut map[int][][]float64, slices *int) (se, df float64, ok bool) {
	if len(g) > 1 {
		var vals []float64
		for _, run := range g {
			if v := est.Of(flatten(run)); !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) < 2 {
			return math.NaN(), 0, false // runs without values of the statistic
		}
		return stats.StdDev(vals) / math.Sqrt(float64(len(vals))), float64(len(vals) - 1), true
	}
	k := stats.BlockCount(g[0], need)
	if *slices = k; k < stats.MinBlocks {
		return math.NaN(), 0, false
	}
	if cut[k] == nil {
		cut[k] = stats.Slices(g[0], k)
	}
	se, k, ok = stats.SlicesSE(cut[k], est)
	*slices = k
	return se, float64(k - 1), ok
}

func flatten(units [][]float64) []float64 {
	var xs []float64
	for _, u := range units {
		xs = append(xs, u...)
	}
	return xs
}

// OneRun says which side rests on a single run.
func OneRun(ra, rb int) string {
	switch {
	case ra < 2 && rb < 2:
		return NoRepeat
	case ra < 2:
		return "one run in A"
	}
	return "one run in B"
}
