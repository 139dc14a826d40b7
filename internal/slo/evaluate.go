package slo

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Evaluator folds records into per-load verdicts. Records of every point
// with the same load (the repeats of --repeat, or a capacity probe run
// again) are pooled into one level. Add is safe for concurrent use; the
// zero value is ready.
type Evaluator struct {
	mu     sync.Mutex
	levels map[record.Load]*level
	// workloads are the workload cells in the order their first record
	// came: the order a matrix ran them, which its verdicts keep.
	workloads []string
	// validity is each summary point's (Qualify); skip holds the points
	// set aside for a measurement taken again (Discard).
	validity map[int]metrics.Validity
	skip     map[int]bool
	// Keep, when positive, bounds the requests a run keeps for intervals
	// (compare): past Keep, a run keeps every s-th request in the order
	// recorded, s doubling as it grows (between Keep/2 and Keep kept), so
	// that its time slices stay in order and its memory does not follow
	// the run. Zero keeps every request, unless Checks are set.
	Keep int
	// Checks, when set before the records come, are the SLOs the
	// evaluation will judge: goodput then counts every request as it
	// comes, and the requests kept for intervals are bounded as by Keep
	// (KeepJudged when Keep is 0), so that a judged soak's memory does not
	// follow its length. Without them goodput counts the requests kept.
	Checks []SLO
}

// KeepJudged bounds the requests a judged run keeps for intervals
// (Evaluator.Checks): the exact samples' bound, past which a point's
// figures are bounded too (docs/METRICS.md, "Exact and bounded figures").
const KeepJudged = stats.ExactMax

// level is everything measured at one load.
type level struct {
	load       record.Load
	agg        metrics.Aggregator // every record of the level, as point 0
	runs       map[int]*run       // by point index
	overloaded string
}

// run is one point's per-request values, for goodput and intervals.
type run struct {
	reqs               []reqVals
	firstSent, lastEnd int64
	seen               bool
	// count is every request the run recorded; reqs keeps every stride-th
	// of them (Evaluator.Keep).
	count, stride int
	// judged and good count every request and those that met every
	// per-request target of Evaluator.Checks, when it was set
	judged, good int
	// queue is the TTFT from the schedule against the scheduled time of
	// every request that has one: its slope tells a queue that grows
	queue stats.SlopeAcc
}

// reqVals are one request's per-request metrics (docs/METRICS.md); NaN
// where undefined.
type reqVals struct {
	failed               bool
	ttft, tpot, e2e, spd float64
	itl                  []float64
	// sched is the scheduled time (s); ttftSched the TTFT from it (ms).
	sched, ttftSched float64
	// hit: the server found some of the prompt in its prefix cache.
	hit bool
}

// Add folds one record in.
func (e *Evaluator) Add(r *record.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.skip[r.Point] {
		return
	}
	if e.levels == nil {
		e.levels = map[record.Load]*level{}
	}
	lv := e.levels[r.Load]
	if lv == nil {
		lv = &level{load: r.Load, runs: map[int]*run{}}
		e.levels[r.Load] = lv
		e.seeWorkload(r.Load.Workload)
	}
	pooled := *r
	pooled.Point = 0
	lv.agg.Add(&pooled)
	if r.Phase == record.PhaseWarmup || (r.Error != nil && r.Error.Class == record.ClassCancelled) {
		return
	}
	rn := lv.runs[r.Point]
	if rn == nil {
		rn = &run{stride: 1}
		lv.runs[r.Point] = rn
	}
	keep := e.Keep
	if keep == 0 && e.Checks != nil {
		keep = KeepJudged
	}
	rn.add(r, keep, e.Checks)
}

func (rn *run) add(r *record.Record, keep int, checks []SLO) {
	if !rn.seen || r.SentNS < rn.firstSent {
		rn.firstSent = r.SentNS
	}
	if !rn.seen || r.EndNS > rn.lastEnd {
		rn.lastEnd = r.EndNS
	}
	rn.seen = true
	rn.count++
	if t, ok := metrics.TTFTSched(r); ok && r.Error == nil {
		rn.queue.Add(float64(r.ScheduledNS)/1e9, t)
	}
	kept := (rn.count-1)%rn.stride == 0
	if !kept && checks == nil {
		return
	}
	v := values(r)
	if checks != nil {
		rn.judged++
		if good(v, checks) {
			rn.good++
		}
	}
	if !kept {
		return
	}
	rn.reqs = append(rn.reqs, v)
	if keep > 1 && len(rn.reqs) >= keep {
		rn.thin()
	}
}

// thin halves a run's kept requests, keeping every other one in order,
// and doubles the stride at which later requests are kept: what stays is
// every stride-th request the run recorded, the first one included.
func (rn *run) thin() {
	n := 0
	for i := 0; i < len(rn.reqs); i += 2 {
		rn.reqs[n] = rn.reqs[i]
		n++
	}
	clear(rn.reqs[n:])
	rn.reqs = rn.reqs[:n]
	rn.stride *= 2
}

// values computes a request's per-request metrics, as defined in
// internal/metrics.
func values(r *record.Record) reqVals {
	v := reqVals{failed: r.Error != nil, ttft: math.NaN(), tpot: math.NaN(), spd: math.NaN(),
		e2e: metrics.E2E(r), sched: float64(r.ScheduledNS) / 1e9, ttftSched: math.NaN()}
	if v.failed {
		return v
	}
	if ttft, ok := metrics.TTFT(r); ok {
		v.ttft = ttft
	}
	v.hit = metrics.CacheHit(r)
	if t, ok := metrics.TTFTSched(r); ok {
		v.ttftSched = t
	}
	if tpot, ok := metrics.TPOT(r); ok {
		v.tpot, v.spd = tpot, 1000/tpot
	}
	metrics.ITL(r.Chunks, func(gap float64) { v.itl = append(v.itl, gap) })
	return v
}

// MarkOverloaded records that the points at load were stopped early
// because the server was clearly overloaded; the load fails.
func (e *Evaluator) MarkOverloaded(load record.Load, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if lv := e.levels[load]; lv != nil {
		lv.overloaded = reason
		return
	}
	if e.levels == nil {
		e.levels = map[record.Load]*level{}
	}
	e.levels[load] = &level{load: load, runs: map[int]*run{}, overloaded: reason}
	e.seeWorkload(load.Workload)
}

// Qualify takes the validity of the summary points (metrics.Summary, with
// the run's client figures and telemetry), which records alone cannot
// tell; a load's verdict carries the reasons of the points pooled into it.
func (e *Evaluator) Qualify(points []metrics.PointSummary) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.validity = map[int]metrics.Validity{}
	for _, p := range points {
		e.validity[p.Index] = p.Validity
	}
}

// Discard sets aside everything measured at load, to be measured again
// (an invalid capacity probe); it returns the points set aside, whose
// records Add ignores from now on.
func (e *Evaluator) Discard(load record.Load) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	lv := e.levels[load]
	if lv == nil {
		return nil
	}
	idx := lv.pointIndexes()
	e.skipLocked(idx)
	delete(e.levels, load)
	return idx
}

// Skip makes Add ignore the records of these points: those a run set
// aside (run.json points[].superseded). Call it before their records.
func (e *Evaluator) Skip(points ...int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.skipLocked(points)
}

func (e *Evaluator) skipLocked(points []int) {
	if e.skip == nil {
		e.skip = map[int]bool{}
	}
	for _, i := range points {
		e.skip[i] = true
	}
}

func (e *Evaluator) seeWorkload(w string) {
	if !slices.Contains(e.workloads, w) {
		e.workloads = append(e.workloads, w)
	}
}

// Options tune an evaluation.
type Options struct {
	// Intervals adds bootstrap confidence intervals (with --repeat).
	Intervals  bool
	Iterations int     // resamples; 0 means stats.DefaultBootstrapIterations
	Confidence float64 // 0 means stats.DefaultConfidence
	Seed       uint64
}

// Evaluate judges every load measured so far, ordered by workload (in the
// order the workloads first ran) and by load within each.
func (e *Evaluator) Evaluate(checks []SLO, opt Options) []PointVerdict {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]PointVerdict, 0, len(e.levels))
	counted := sameChecks(e.Checks, checks)
	for _, lv := range e.levels {
		out = append(out, lv.verdict(checks, counted, opt, e.validity))
	}
	slices.SortFunc(out, func(a, b PointVerdict) int {
		return cmp.Or(cmp.Compare(slices.Index(e.workloads, a.Load.Workload), slices.Index(e.workloads, b.Load.Workload)),
			compareLoad(a.Load, b.Load))
	})
	return out
}

// Level returns the verdict at one load, and whether it was measured.
func (e *Evaluator) Level(load record.Load, checks []SLO, opt Options) (PointVerdict, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	lv, ok := e.levels[load]
	if !ok {
		return PointVerdict{}, false
	}
	return lv.verdict(checks, sameChecks(e.Checks, checks), opt, e.validity), true
}

// sameChecks says whether the checks judged are those goodput counted as
// the records came (Evaluator.Checks).
func sameChecks(counted, judged []SLO) bool {
	return counted != nil && slices.EqualFunc(counted, judged, func(a, b SLO) bool { return a.Expr == b.Expr })
}

func compareLoad(a, b record.Load) int {
	return cmp.Or(cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Concurrency, b.Concurrency),
		cmp.Compare(a.MaxConcurrency, b.MaxConcurrency))
}

// LoadValue is the number a load is searched and ordered by: the
// concurrency or the rate.
func LoadValue(l record.Load) float64 {
	if l.Rate > 0 {
		return l.Rate
	}
	return float64(l.Concurrency)
}

func (lv *level) verdict(checks []SLO, counted bool, opt Options, validity map[int]metrics.Validity) PointVerdict {
	pt, _ := lv.agg.Point(0)
	pv := PointVerdict{Load: lv.load, OutputTPS: pt.OutputTPS, Overloaded: lv.overloaded, Checks: []Check{},
		Failed: []string{}, Shortfalls: []string{}}
	pv.E2EMeanMS, pv.SpeedP5 = pt.E2E.Mean, pt.DecodeTPSReq.P5
	idx := lv.pointIndexes()
	pv.Points = idx
	pv.goodput(lv, idx, checks, counted)
	pv.AllFailed, pv.Failing = pt.AllFailed, failing(&pt)
	if pv.Failing != "" {
		pv.Overloaded = "" // a server failing at any load is not overloaded
	} else if pv.Overloaded == "" && lv.load.Rate > 0 {
		pv.Overloaded = lv.queueGrowth(idx, checks)
		if pv.Overloaded == "" && len(idx) == 1 && pt.Overload != nil {
			// arrivals outpaced completions, or timeouts dominated
			// (docs/METRICS.md, Open-loop overload)
			pv.Overloaded = pt.Overload.Reason
		}
	}
	pv.Pass = pv.Overloaded == "" && pv.Failing == "" && !pv.AllFailed
	if len(idx) == 1 && !pt.LoadHeld && pv.Pass {
		// One point's records: its achieved load is defined (repeats pooled
		// into one window are not). A load stopped early, failing or all
		// failed fails whatever load it held.
		pv.NotHeld = notHeld(&pt)
	}
	for _, s := range checks {
		c := check(s, &pt)
		if opt.Intervals {
			c.interval(s, lv, idx, opt)
		}
		if !c.Pass {
			pv.Pass = false
			pv.Failed = append(pv.Failed, s.Expr)
			pv.Shortfalls = append(pv.Shortfalls, c.Shortfall())
		}
		pv.Checks = append(pv.Checks, c)
	}
	var points metrics.Validity
	for _, i := range idx {
		points.Merge(validity[i])
	}
	pv.qualify(points)
	return pv
}

// notHeld says how a point fell short of its nominal load.
func notHeld(pt *metrics.PointSummary) string {
	if pt.Load.Rate > 0 {
		return fmt.Sprintf("%.3g req/s sent of %.3g offered", pt.AchievedRate, pt.OfferedRate)
	}
	return fmt.Sprintf("%.1f of %d users in flight on average, at least 90%% of them for %.0f%% of the window, in %d requests",
		pt.ConcurrencyAchieved, pt.Load.Concurrency, 100*pt.ConcurrencyHeldShare, pt.Requests.Completed+pt.Requests.Failed)
}

// goodput counts the requests that met every per-request target: as they
// came, when counted (Evaluator.Checks are the checks), else among those
// kept.
func (pv *PointVerdict) goodput(lv *level, idx []int, checks []SLO, counted bool) {
	var window float64
	for _, i := range idx {
		rn := lv.runs[i]
		window += float64(rn.lastEnd-rn.firstSent) / 1e9
		if counted {
			pv.Requests += rn.judged
			pv.Good += rn.good
			continue
		}
		for _, v := range rn.reqs {
			pv.Requests++
			if good(v, checks) {
				pv.Good++
			}
		}
	}
	if window > 0 {
		pv.Goodput = float64(pv.Good) / window
	}
	if pv.Requests > 0 {
		a := float64(pv.Good) / float64(pv.Requests)
		pv.Attainment = &a
	}
}

// good reports whether a request met every per-request target. A failed
// request never does; a value the request does not have (no TPOT for a
// one-token answer) is not judged.
func good(v reqVals, checks []SLO) bool {
	if v.failed {
		return false
	}
	for _, s := range checks {
		if s.def.judge == nil {
			continue
		}
		if x := s.def.judge(v); !math.IsNaN(x) && !s.Holds(x) {
			return false
		}
	}
	return true
}
