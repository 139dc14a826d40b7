// Package compare sets two recorded runs side by side: whether they are a
// controlled comparison (the same model, quantization, runtime, context,
// sampling, workload, load policy and time scale), and at each load point
// both measured, how every headline metric changed, with a bootstrap
// confidence interval of the change and a judgement of whether it is out
// of noise. It reads summaries and records through slo's evaluator; it
// never runs anything. docs/METRICS.md ("Comparing runs") defines the
// difference and its interval. It returns values; rendering them is
// report's.
package compare

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
)

// Schema names compare's JSON output (docs/OUTPUT.md).
const Schema = "servebench.compare/v1"

// Headline are the statistics compared at every load point, in the order
// they are printed, named as SLOs name them ("speed p95" is the speed 95%
// of requests reached: the p5 of per-request decode speed): the metrics
// of metrics.Table with a Headline place, a distribution by its median
// and upper tail.
var Headline = func() []string {
	var rows []*metrics.Metric
	for i := range metrics.Table {
		if metrics.Table[i].Headline > 0 {
			rows = append(rows, &metrics.Table[i])
		}
	}
	slices.SortFunc(rows, func(a, b *metrics.Metric) int { return cmp.Compare(a.Headline, b.Headline) })
	var names []string
	for _, m := range rows {
		if !m.Distribution() {
			names = append(names, m.Name)
			continue
		}
		for _, p := range []string{"p50", "p95", "p99"} {
			names = append(names, m.Name+" "+p)
		}
	}
	return names
}()

// Side is one run: its summary, recomputed from its records, and the same
// records by load for the intervals.
type Side struct {
	// Name is the run as the user named it (a directory or a history id).
	Name string
	// Dirs are the side's run directories, resolved (absolute, links
	// followed), when known: the same directories twice are the same runs.
	Dirs    []string
	Summary *metrics.Summary
	Eval    *slo.Evaluator
}

// Options tune a comparison; the zero value uses servebench's defaults.
type Options struct {
	Confidence float64 // 0: stats.DefaultConfidence
	Iterations int     // 0: stats.DefaultBootstrapIterations
	// Seed drives the resampling; the same seed gives the same intervals.
	Seed  uint64
	Gates []Gate
}

// Result is a comparison (compare --json).
type Result struct {
	Schema string  `json:"schema"`
	A      RunInfo `json:"a"`
	B      RunInfo `json:"b"`
	// Confidence is the level of every interval; Iterations the
	// resamples behind each.
	Confidence float64 `json:"confidence"`
	Iterations int     `json:"iterations"`
	// Controlled is true when no property a controlled comparison holds
	// equal is known to differ (Differences has no entry with Known).
	Controlled bool `json:"controlled"`
	// SameRun, when set, says why A and B are one run (the same
	// directory, or the same start time in run.json): nothing is compared
	// and no gate is judged.
	SameRun     string       `json:"same_run,omitempty"`
	Differences []Difference `json:"differences"`
	// Notes are plain statements about what could be matched: no common
	// load points, different workloads, points measured by one run only.
	Notes  []string      `json:"notes"`
	Points []Point       `json:"points"`
	OnlyA  []record.Load `json:"only_in_a"`
	OnlyB  []record.Load `json:"only_in_b"`
	// Gates are the --fail-on-regression thresholds judged at every
	// common point; Regressed is true when any of them failed.
	Gates     []GateResult `json:"gates"`
	Regressed bool         `json:"regressed"`
	// Inconclusive is true when no gate failed but one was judged at a
	// point whose evidence is invalid (Point.Inconclusive): exit 4.
	Inconclusive bool `json:"inconclusive"`
}

// RunInfo names a compared run.
type RunInfo struct {
	Name      string  `json:"name"`
	Model     string  `json:"model,omitempty"`
	Started   string  `json:"started,omitempty"`
	TimeScale float64 `json:"time_scale"`
	Requests  int     `json:"requests"`
	// Warnings are the run's own (summary.json warnings: an interrupted
	// run, a client near saturation); PointWarnings counts its points'.
	Warnings      []string `json:"warnings"`
	PointWarnings int      `json:"point_warnings"`
}

// Point is one load point both runs measured.
type Point struct {
	Load      record.Load `json:"load"`
	RequestsA int         `json:"requests_a"`
	RequestsB int         `json:"requests_b"`
	// RunsA and RunsB count the runs (repeats) pooled at this load.
	RunsA   int      `json:"runs_a"`
	RunsB   int      `json:"runs_b"`
	Changes []Change `json:"metrics"`
	Notes   []string `json:"notes"`
	// Inconclusive says why the row is no evidence of a change: either
	// run's points here are invalid ("B: sim_behind: ..."); empty when
	// both are valid.
	Inconclusive string `json:"inconclusive,omitempty"`
}

// Verdicts of a change, judged from its interval.
const (
	Worse    = "worse"   // the interval lies wholly on the worse side of 0
	Better   = "better"  // wholly on the better side
	Noise    = "noise"   // the interval contains 0: no change shown
	NoChange = "same"    // no change at all: every resample gave 0 (no errors on either side), or equal values without an interval
	Unknown  = "unknown" // no interval could be computed (see Why)
	Missing  = "missing" // one run measured nothing for this metric
)

// How Change.Why begins when a statistic rests on too few values, or has
// no interval for want of repeats.
const (
	thinNote = "too few"
	NoRepeat = "one run each" // both sides rest on one run each (OneRun)
)

// Change is how one statistic moved from A to B at a load point.
type Change struct {
	Metric         string   `json:"metric"`
	Stat           string   `json:"stat,omitempty"`
	Field          string   `json:"field"`
	Unit           string   `json:"unit"`
	HigherIsBetter bool     `json:"higher_is_better"`
	A              *float64 `json:"a"`
	B              *float64 `json:"b"`
	// Diff is B − A in Unit; Rel is Diff / A (null when A is 0).
	Diff *float64 `json:"diff"`
	Rel  *float64 `json:"rel"`
	// CI is the bootstrap interval of Diff (null when none).
	CI      *slo.Interval `json:"ci"`
	Verdict string        `json:"verdict"`
	// Noise says where the interval's between-run noise came from (null
	// for throughput, which has no per-request values).
	Noise *NoiseEstimate `json:"noise"`
	// SamplesA and SamplesB are how many values back A and B; Thin is
	// true when either is fewer than the statistic needs (a p99 of 14
	// requests is their maximum); Why says so, or why there is no interval.
	SamplesA int    `json:"samples_a"`
	SamplesB int    `json:"samples_b"`
	Thin     bool   `json:"thin"`
	Why      string `json:"why,omitempty"`

	stat slo.Statistic
}

// Statistic is the statistic the change measures, which formats its
// values in their unit.
func (c Change) Statistic() slo.Statistic { return c.stat }

// Unrepeated says whether the change has no interval for want of repeats:
// its Why begins by naming the side that rests on one run (OneRun).
func (c Change) Unrepeated() bool {
	return strings.HasPrefix(c.Why, NoRepeat+"; ") || strings.HasPrefix(c.Why, "one run in ")
}

// Compare compares b with a.
func Compare(a, b *Side, opt Options) *Result {
	opt.Confidence = cmp.Or(opt.Confidence, stats.DefaultConfidence)
	opt.Iterations = cmp.Or(opt.Iterations, stats.DefaultBootstrapIterations)
	opt.Seed = cmp.Or(opt.Seed, 1)
	r := &Result{Schema: Schema, A: info(a), B: info(b), Confidence: opt.Confidence, Iterations: opt.Iterations,
		Notes: []string{}, Points: []Point{}, OnlyA: []record.Load{}, OnlyB: []record.Load{}, Gates: []GateResult{}}
	r.Differences = Differences(a.Summary.Run, b.Summary.Run, a.Eval.Loads(), b.Eval.Loads())
	r.Controlled = controlled(r.Differences)
	if r.SameRun = sameRun(a, b); r.SameRun != "" {
		return r
	}
	r.match(a, b, opt, statistics(opt.Gates))
	r.qualify(a, b)
	r.judgeGates(opt.Gates)
	return r
}

// sameRun says why a and b are the same run, or is empty: the same
// directory, or a run.json with the same start time to the nanosecond
// (a copy of one run).
func sameRun(a, b *Side) string {
	da, db := slices.Sorted(slices.Values(a.Dirs)), slices.Sorted(slices.Values(b.Dirs))
	if len(da) > 0 && slices.Equal(da, db) {
		return "the same directory, " + strings.Join(da, ", ")
	}
	ra, rb := a.Summary.Run, b.Summary.Run
	if len(da) < 2 && len(db) < 2 && ra != nil && rb != nil && ra.Started != "" && ra.Started == rb.Started && ra.Ended == rb.Ended {
		return "run.json of both says it started at " + ra.Started
	}
	return ""
}

func info(s *Side) RunInfo {
	ri := RunInfo{Name: s.Name, TimeScale: s.Summary.Run.Scale(), Warnings: s.Summary.Warnings}
	if run := s.Summary.Run; run != nil {
		ri.Model, ri.Started = run.Target.Model, run.Started
	}
	for _, p := range s.Summary.Points {
		ri.Requests += p.Requests.Completed + p.Requests.Failed
		ri.PointWarnings += len(p.Warnings)
	}
	return ri
}

// match pairs the loads both runs measured and compares each pair.
func (r *Result) match(a, b *Side, opt Options, names []string) {
	inB := map[record.Load]bool{}
	for _, l := range b.Eval.Loads() {
		inB[l] = true
	}
	for _, l := range a.Eval.Loads() {
		if !inB[l] {
			r.OnlyA = append(r.OnlyA, l)
			continue
		}
		delete(inB, l)
		r.Points = append(r.Points, comparePoint(l, a, b, opt, names))
	}
	for _, l := range b.Eval.Loads() {
		if inB[l] {
			r.OnlyB = append(r.OnlyB, l)
		}
	}
	r.Notes = append(r.Notes, matchNotes(r, a.Eval.Loads(), b.Eval.Loads())...)
}

// comparePoint compares every headline statistic at one load.
func comparePoint(l record.Load, a, b *Side, opt Options, names []string) Point {
	pa, _ := a.Eval.Pooled(l)
	pb, _ := b.Eval.Pooled(l)
	p := Point{Load: l, RequestsA: pa.Requests.Completed + pa.Requests.Failed,
		RequestsB: pb.Requests.Completed + pb.Requests.Failed,
		RunsA:     runs(a.Summary, l), RunsB: runs(b.Summary, l), Changes: []Change{}, Notes: []string{}}
	for _, name := range names {
		st := slo.MustStatistic(name)
		va, na := valueAt(st, a, l, &pa)
		vb, nb := valueAt(st, b, l, &pb)
		p.Changes = append(p.Changes, change(st, va, vb, na, nb))
	}
	p.intervals(a, b, opt)
	for _, n := range []string{thinMetrics(p.Changes), keptNote(l, a, b)} {
		if n != "" {
			p.Notes = append(p.Notes, n)
		}
	}
	return p
}

// statistics are the headline statistics and any other a gate names.
func statistics(gates []Gate) []string {
	names := slices.Clone(Headline)
	for _, g := range gates {
		if !slices.Contains(names, g.Stat.Name()) {
			names = append(names, g.Stat.Name())
		}
	}
	return names
}

// runs counts a summary's points at load l: the repeats pooled there.
func runs(s *metrics.Summary, l record.Load) int {
	n := 0
	for _, p := range s.Points {
		if p.Load == l {
			n++
		}
	}
	return n
}

// valueAt is a statistic of one side at load l, with how many values back
// it: read from the records pooled there, except aggregate throughput over
// repeats, which is the mean of the runs' own (pooling would count the
// time between repeats as the window).
func valueAt(st slo.Statistic, s *Side, l record.Load, pooled *metrics.PointSummary) (float64, int) {
	if g := perRun(s, l, st); st.PerRun() && len(g) > 1 {
		var xs []float64
		for _, run := range g {
			xs = append(xs, run[0][0])
		}
		_, n := st.Value(pooled)
		return stats.Mean(xs), n
	}
	return st.Value(pooled)
}

// change takes the difference of a statistic's values on both sides.
func change(st slo.Statistic, va, vb float64, na, nb int) Change {
	c := Change{Metric: st.Name(), Stat: st.Stat, Field: st.Field, Unit: st.Unit, HigherIsBetter: st.HigherIsBetter(), stat: st}
	c.SamplesA, c.SamplesB = na, nb
	c.A, c.B = num(va), num(vb)
	if c.A == nil || c.B == nil {
		c.Verdict, c.Why = Missing, "not measured by "+missingSide(c.A == nil, c.B == nil)
		return c
	}
	d := vb - va
	c.Diff = &d
	if va != 0 {
		c.Rel = num(d / va)
	}
	if need := st.MinSamples(); min(na, nb) < need {
		c.Thin = true
		c.Why = thinWhy(st, min(na, nb), need)
	}
	return c
}

func missingSide(a, b bool) string {
	switch {
	case a && b:
		return "either run"
	case a:
		return "A"
	}
	return "B"
}

func thinWhy(st slo.Statistic, n, need int) string {
	return thinNote + ": " + st.Stat + " of " + itoa(n) + " values is an interpolation among the extreme few (needs " + itoa(need) + ")"
}

// num is v as a JSON number, nil for NaN or an infinity.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
