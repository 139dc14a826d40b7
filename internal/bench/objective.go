package bench

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// JudgeOptions say how an objective is measured.
type JudgeOptions struct {
	// Base is every point's amount, warm-up and arrivals; Judge sets each
	// point's index, load and seed.
	Base load.Point
	// Repeat runs each load that many times (at least once); verdicts
	// then carry confidence intervals.
	Repeat int
	// FindCapacity searches for the highest load at which every SLO holds
	// instead of sweeping the objective's loads.
	FindCapacity bool
	// Workloads are the cells of a workload matrix (CellLabels), each
	// swept or searched on its own, in this order; none or [""] for a run
	// with one workload.
	Workloads []string
	// Eval, when set, is the evaluator the records are judged with; the
	// caller keeps it, the records by load, once Judge returns.
	Eval *slo.Evaluator
}

// Judge measures an objective in one session (one records file, one
// summary): it sweeps the objective's loads, or searches for its
// capacity, makes sure the target load is measured, stops a point early
// when the server is clearly overloaded, and judges. On an error after
// the session opened, the report covers what completed.
func Judge(ctx context.Context, cfg Config, o *slo.Objective, opt JudgeOptions) (*slo.Report, *Result, error) {
	repeat := max(opt.Repeat, 1)
	m := &measurer{ev: cmp.Or(opt.Eval, &slo.Evaluator{}), checks: o.Checks(), base: opt.Base, repeat: repeat, seed: cfg.Run.Seed,
		opts: slo.Options{Intervals: repeat > 1, Seed: cfg.Run.Seed}}
	// goodput counted as the records come: the evaluator keeps a bounded
	// sample of the requests for intervals, whatever the run's length
	m.ev.Checks = m.checks
	rep := &slo.Report{Objective: o}
	capy := map[string]*slo.Capacity{}
	cfg.Observe = m.observe
	// Judged on the final summary: its client figures and telemetry say
	// whether each point's evidence holds (metrics.Validity).
	cfg.Decorate = func(sum *metrics.Summary) any {
		rep.Summary = sum
		m.ev.Qualify(sum.Points)
		rep.Verdict = slo.Judge(o, m.ev.Evaluate(m.checks, m.opts), capy, cfg.Run.Target.Server)
		return rep
	}
	var err error
	if m.sess, err = Open(cfg); err != nil {
		return nil, nil, err
	}
	var runErr error
	workloads := opt.Workloads
	if len(workloads) == 0 {
		workloads = []string{""}
	}
	for _, w := range workloads {
		if runErr = m.measureAll(ctx, o, w, opt.FindCapacity, capy); runErr != nil {
			break
		}
	}
	res, err := m.sess.Close(ctx)
	if res != nil {
		rep.Summary = res.Summary
	}
	return rep, res, cmp.Or(runErr, err)
}

// An objective measures each closed-loop load at steady state: at least
// SteadyRequestsPerUser requests per virtual user whatever the point's own
// request count, so that every user is busy for most of the window and
// the load is held (docs/METRICS.md, Achieved load). A point bounded by a
// duration keeps it; an open loop keeps its count, as its load is the
// schedule's and its queue growth is judged separately.
const SteadyRequestsPerUser = 8

// steady raises a closed-loop, request-bound point's count to its
// steady-state minimum.
func steady(p load.Point) load.Point {
	if p.Requests > 0 && p.Load.Concurrency > 0 {
		p.Requests = max(p.Requests, SteadyRequestsPerUser*p.Load.Concurrency)
	}
	return p
}

// measurer runs an objective's load points in a session, each load
// repeated, and stops a point early when the server is clearly overloaded.
type measurer struct {
	sess   *Session
	ev     *slo.Evaluator
	checks []slo.SLO
	opts   slo.Options
	base   load.Point
	repeat int
	seed   uint64
	next   int
	watch  atomic.Pointer[watch]
}

// watch is the overload detector of the point running now.
type watch struct {
	load   record.Load
	ov     *slo.Overload
	cancel context.CancelFunc
}

// observe sees every record (Config.Observe, serialised).
func (m *measurer) observe(r *record.Record) {
	m.ev.Add(r)
	if w := m.watch.Load(); w != nil && r.Load == w.load {
		if why := w.ov.Add(r); why != "" {
			m.ev.MarkOverloaded(r.Load, why)
			w.cancel()
		}
	}
}

// measureAll sweeps the objective's loads of one workload, or searches
// for its capacity (kept in capy), and makes sure its target load is
// measured.
func (m *measurer) measureAll(ctx context.Context, o *slo.Objective, workload string, search bool, capy map[string]*slo.Capacity) error {
	levels := o.Load.Levels()
	for i := range levels {
		levels[i].Workload = workload
	}
	if search {
		start := slices.MinFunc(levels, func(a, b record.Load) int { return cmp.Compare(slo.LoadValue(a), slo.LoadValue(b)) })
		c, err := slo.Search{Start: start, Again: m.again}.Run(ctx, m.measure)
		capy[workload] = &c
		if err != nil {
			return err
		}
		levels = nil
	}
	target := o.Load.TargetLoad()
	target.Workload = workload
	if !slices.Contains(levels, target) {
		levels = append(levels, target)
	}
	for _, l := range levels {
		if _, err := m.measure(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// again measures a load once more for the capacity search (slo.Search
// Again): what was measured there is set aside, in the verdict and in
// run.json (points[].superseded).
func (m *measurer) again(ctx context.Context, l record.Load) (slo.PointVerdict, error) {
	if err := m.sess.Supersede(m.ev.Discard(l)); err != nil {
		return slo.PointVerdict{}, err
	}
	return m.measure(ctx, l)
}

// measure runs a load (repeat times, unless it is already measured) and
// returns its verdict, with the validity of its points.
func (m *measurer) measure(ctx context.Context, l record.Load) (slo.PointVerdict, error) {
	if pv, ok := m.ev.Level(l, m.checks, m.opts); ok {
		return pv, nil
	}
	for range m.repeat {
		pctx, cancel := context.WithCancel(ctx)
		m.watch.Store(&watch{load: l, ov: slo.NewOverload(m.checks), cancel: cancel})
		p := atLoad(m.base, l)
		p.Index, p.Load, p.Seed = m.next, l, m.seed+uint64(m.next)
		p = steady(p)
		m.next++
		_, err := m.sess.RunPoint(pctx, p)
		overloaded := pctx.Err() != nil && ctx.Err() == nil
		m.watch.Store(nil)
		cancel()
		if ctx.Err() != nil {
			return slo.PointVerdict{}, ctx.Err()
		}
		if err != nil && !overloaded {
			return slo.PointVerdict{}, err
		}
		if overloaded {
			break // more repeats of a clearly failing load add nothing
		}
	}
	m.ev.Qualify(m.sess.Summary(ctx).Points)
	pv, _ := m.ev.Level(l, m.checks, m.opts)
	if w := m.sess.cfg.Watch; w != nil {
		w.Verdict(pv)
	}
	return pv, nil
}
