package slo

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Statistic is what an SLO measures, without a target: a metric and, for a
// metric with a distribution, the statistic read from it ("ttft p95",
// "speed p95" = the p5 of speeds, "throughput"). Comparisons between runs
// report how statistics changed; they name them as SLOs do.
type Statistic struct {
	Metric     string `json:"metric"`
	Percentile string `json:"percentile,omitempty"`
	Stat       string `json:"stat,omitempty"`
	Field      string `json:"field"`
	Unit       string `json:"unit"`
	def        *metricDef
}

// ParseStatistic reads "METRIC [PERCENTILE]" with the names and
// percentiles of Parse: "ttft p95", "speed p50", "error_rate".
func ParseStatistic(text string) (Statistic, error) {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(text)))
	if len(f) == 0 || len(f) > 2 {
		return Statistic{}, errorf(text, "want METRIC [PERCENTILE] (metrics: %s)", metricNames())
	}
	m, ok := lookupMetric(f[0])
	if !ok {
		return Statistic{}, errorf(text, "unknown metric %q (known: %s)", f[0], metricNames())
	}
	s := SLO{Metric: m.Name, Field: m.Field, Unit: m.Unit, def: m}
	pct := ""
	if len(f) == 2 {
		pct = f[1]
	}
	if err := s.setPercentile(text, pct); err != nil {
		return Statistic{}, err
	}
	return s.Statistic(), nil
}

// MustStatistic is ParseStatistic for names fixed in code.
func MustStatistic(text string) Statistic {
	s, err := ParseStatistic(text)
	if err != nil {
		panic(err)
	}
	return s
}

// Statistic is what the SLO measures.
func (s SLO) Statistic() Statistic {
	return Statistic{Metric: s.Metric, Percentile: s.Percentile, Stat: s.Stat, Field: s.Field, Unit: s.Unit, def: s.def}
}

// Name is the statistic as written: "ttft p95", "throughput".
func (s Statistic) Name() string { return strings.TrimSpace(s.Metric + " " + s.Percentile) }

// HigherIsBetter reports whether larger values are better.
func (s Statistic) HigherIsBetter() bool { return s.def.HigherIsBetter }

// Value reads the statistic from a load point's summary, with how many
// values back it; NaN when nothing was measured.
func (s Statistic) Value(pt *metrics.PointSummary) (float64, int) {
	return measure(SLO{Stat: s.Stat, def: s.def}, pt)
}

// Format writes a value in the statistic's unit: "1.23s", "45.6 tok/s",
// "0.5%".
func (s Statistic) Format(v float64) string { return SLO{def: s.def}.Format(v) }

// MinSamples is how many values the statistic needs before it is an
// observed tail rather than an interpolation among the extreme few
// (stats.MinSamples); 1 for a mean or a one-number metric.
func (s Statistic) MinSamples() int {
	for _, q := range stats.Quantiles {
		if q.Key == s.Stat {
			return stats.MinSamples(q.P)
		}
	}
	return 1
}

// PerRequest reports whether each request contributes values to the
// statistic, so that its interval can be bootstrapped over requests;
// false for aggregate throughput, which only repeats can vary.
func (s Statistic) PerRequest() bool { return s.def.samples != nil }

// PerRun reports whether the statistic is a rate over a point's whole
// window, so that over repeats it is the mean of each run's own value
// rather than one pooled window (metrics.Metric.PerRun).
func (s Statistic) PerRun() bool { return s.def.PerRun }

// StatFunc is the statistic computed from pooled per-request values, for
// bootstrap intervals.
func (s Statistic) StatFunc() (func([]float64) float64, bool) {
	return statFunc(SLO{Stat: s.Stat, def: s.def})
}

// Estimator is StatFunc as stats' fast resampling takes it: the quantile
// the statistic reads (the p5 for "speed p95"), or the mean.
func (s Statistic) Estimator() (stats.Estimator, bool) {
	if s.def.samples == nil {
		return stats.Estimator{}, false
	}
	if !s.def.Distribution() || s.Stat == "mean" {
		return stats.Estimator{Mean: true}, true
	}
	if s.Stat == "max" {
		return stats.Estimator{P: 1}, true
	}
	for _, q := range stats.Quantiles {
		if q.Key == s.Stat {
			return stats.Estimator{P: q.P}, true
		}
	}
	return stats.Estimator{}, false
}

// Groups are the per-request values of the statistic measured at load,
// one group per point (run) recorded there, as stats.BootstrapInterval
// takes them; nil when nothing was recorded at load or the statistic has
// no per-request values.
func (e *Evaluator) Groups(load record.Load, s Statistic) [][][]float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	lv := e.levels[load]
	if lv == nil || s.def.samples == nil {
		return nil
	}
	return lv.groups(s.def, lv.pointIndexes())
}

// Requests are Groups with every measured request a unit, in the order
// it was recorded: an empty one where the request gave the statistic no
// value (a failed request has no TTFT). Every statistic of a load then has
// the same units, so one resample of requests serves them all, and a
// run's units in order are its time slices (compare).
func (e *Evaluator) Requests(load record.Load, s Statistic) [][][]float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	lv := e.levels[load]
	if lv == nil || s.def.samples == nil {
		return nil
	}
	idx := lv.pointIndexes()
	groups := make([][][]float64, 0, len(idx))
	for _, i := range idx {
		g := make([][]float64, len(lv.runs[i].reqs))
		for j, v := range lv.runs[i].reqs {
			g[j] = s.def.samples(v)
		}
		groups = append(groups, g)
	}
	return groups
}

// Kept is how many of the requests measured at load the evaluator kept
// for intervals, and how many there were: fewer kept when a run passed
// Keep.
func (e *Evaluator) Kept(load record.Load) (kept, recorded int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if lv := e.levels[load]; lv != nil {
		for _, rn := range lv.runs {
			kept, recorded = kept+len(rn.reqs), recorded+rn.count
		}
	}
	return kept, recorded
}

// groups collects what each of the level's runs idx contributed to a
// metric, request by request.
func (lv *level) groups(def *metricDef, idx []int) [][][]float64 {
	groups := make([][][]float64, 0, len(idx))
	for _, i := range idx {
		var g [][]float64
		for _, v := range lv.runs[i].reqs {
			if u := def.samples(v); len(u) > 0 {
				g = append(g, u)
			}
		}
		groups = append(groups, g)
	}
	return groups
}

// Pooled is the summary of every record at load, repeats pooled (as the
// verdict judges it), and whether anything was recorded there.
func (e *Evaluator) Pooled(load record.Load) (metrics.PointSummary, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	lv := e.levels[load]
	if lv == nil {
		return metrics.PointSummary{}, false
	}
	return lv.agg.Point(0)
}

// Loads lists the loads recorded, in order (workload first, then load).
func (e *Evaluator) Loads() []record.Load {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]record.Load, 0, len(e.levels))
	for l := range e.levels {
		out = append(out, l)
	}
	sortLoads(out)
	return out
}

// sortLoads orders loads by workload cell, then as Evaluate orders them.
func sortLoads(ls []record.Load) {
	slices.SortFunc(ls, func(a, b record.Load) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), compareLoad(a, b))
	})
}

// pointIndexes are the level's point indexes, in order.
func (lv *level) pointIndexes() []int {
	return slices.Sorted(maps.Keys(lv.runs))
}
