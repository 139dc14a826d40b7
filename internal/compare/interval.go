package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
)

// interval adds the bootstrap interval of the change and judges it.
func (c *Change) interval(st slo.Statistic, l record.Load, a, b *Side, opt Options) {
	if c.Diff == nil {
		return
	}
	ga, gb, why := groups(st, l, a, b)
	lo, hi, ok := 0.0, 0.0, false
	if why == "" {
		stat, per := st.StatFunc()
		if !per {
			stat = stats.Mean // aggregate throughput: the mean of the runs' values
		}
		lo, hi, ok = stats.BootstrapDiffInterval(ga, gb, stat, opt.Confidence, opt.Iterations, opt.Seed)
	}
	if !ok {
		c.Verdict = Unknown
		if *c.Diff == 0 {
			c.Verdict = NoChange
		}
		c.Why = joinWhy(c.Why, why)
		return
	}
	// A percentile interval of a tail from few values can miss the
	// difference measured; it is widened to contain it.
	lo, hi = min(lo, *c.Diff), max(hi, *c.Diff)
	c.CI = &slo.Interval{Low: lo, High: hi, Level: opt.Confidence}
	c.Verdict = judge(lo, hi, c.HigherIsBetter)
}

// groups are the values each side's runs contributed to st at l, as
// stats.BootstrapDiffInterval resamples them; why says why there are
// none. Per-request statistics resample requests (and repeats);
// aggregate throughput is one number per run, so only repeats vary it.
func groups(st slo.Statistic, l record.Load, a, b *Side) (ga, gb [][][]float64, why string) {
	if st.PerRequest() {
		return a.Eval.Groups(l, st), b.Eval.Groups(l, st), ""
	}
	if st.Metric != "throughput" {
		return nil, nil, st.Name() + " has no per-request values to resample"
	}
	ga, gb = perRun(a, l), perRun(b, l)
	if len(ga) < 2 || len(gb) < 2 {
		return nil, nil, fmt.Sprintf("%s: %s is one number per run, so only repeats (run --repeat N) give it an interval", noRepeat, st.Name())
	}
	return ga, gb, ""
}

// perRun is each run's aggregate output throughput at l, one group per run.
func perRun(s *Side, l record.Load) [][][]float64 {
	var g [][][]float64
	for _, p := range s.Summary.Points {
		if p.Load == l && p.Requests.Completed > 0 {
			g = append(g, [][]float64{{p.OutputTPS}})
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
