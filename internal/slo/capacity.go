package slo

import (
	"context"
	"math"
	"strconv"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// Search defaults. A doubling ramp reaches any capacity in log2 steps and
// the bisection then halves the bracket each probe.
const (
	DefaultSearchFactor = 2
	// DefaultMaxConcurrency and DefaultMaxRate bound the ramp: beyond them
	// the load generator, not the server, is what gets measured.
	DefaultMaxConcurrency = 4096
	DefaultMaxRate        = 10000
	// DefaultRateResolution stops bisecting a rate when the bracket is
	// within 10% of the passing rate: finer than run-to-run noise is not
	// worth the probes.
	DefaultRateResolution = 0.1
	// searchFloorSteps is how far below the starting load a search goes
	// (start / factor^4) when the start already fails.
	searchFloorSteps = 4
)

// What bounds a capacity when no SLO does (Capacity.BoundedBy).
const (
	BoundedBySample      = "sample"
	BoundedBySearchLimit = "search_limit"
	// BoundedByInvalid: a load's evidence could not carry its result (the
	// simulator fell behind, the client saturated, ...; Invalid says where
	// and why): the capacity is inconclusive beyond the last valid load.
	BoundedByInvalid = "invalid"
)

// Probe measures the objective at one load.
type Probe func(ctx context.Context, load record.Load) (PointVerdict, error)

// Search finds the highest load at which every SLO holds: it raises the
// load geometrically from Start until a probe fails (or Max is reached),
// then bisects between the last pass and the first failure. Closed loops
// bisect to one virtual user, open loops to Resolution of the rate.
type Search struct {
	Start      record.Load // the first load; its kind (concurrency or rate) and workload are kept
	Factor     float64     // ramp factor; 0 means DefaultSearchFactor
	Max        float64     // highest load; 0 means the default for the kind
	Resolution float64     // open loop: relative bracket width; 0 means DefaultRateResolution
	// Again measures a load once more, what was measured there set
	// aside: a probe whose evidence was invalid for a reason that may
	// pass (Remeasurable) is measured again once, and the search stops
	// there if it is still invalid. Nil: it stops at once.
	Again Probe
}

// Capacity is the result of a search (Method "search") or of reading a
// sweep (Method "sweep"). JSON names are part of summary.json.
type Capacity struct {
	Method string `json:"method"`
	// Found is false when even the lowest load tried failed.
	Found bool `json:"found"`
	// Load is the highest load that passed with every lower load tried
	// passing too; FailsAt the lowest load tried above it that failed
	// (null when none did), with the SLOs that failed there.
	Load       *record.Load `json:"load"`
	FailsAt    *record.Load `json:"fails_at"`
	FailedSLOs []string     `json:"failed_slos"`
	Shortfalls []string     `json:"shortfalls"`
	Overloaded string       `json:"overloaded,omitempty"`
	// BoundedBy says, when the result is not bounded by an SLO failing,
	// what bounds it: "sample" (a passing load was not held, so it is no
	// evidence: NotHeld says at which load and why) or "search_limit"
	// (every load passed up to the search's maximum).
	BoundedBy string `json:"bounded_by,omitempty"`
	NotHeld   string `json:"not_held,omitempty"`
	// Failing says why FailsAt failed for reasons no load explains.
	Failing string `json:"failing,omitempty"`
	// Invalid says, when BoundedBy is "invalid", at which load and why
	// the evidence could not carry a result.
	Invalid string `json:"invalid,omitempty"`
	// Probes is the number of loads measured by the search.
	Probes int `json:"probes"`
}

func (s Search) defaults() Search {
	if s.Factor <= 1 {
		s.Factor = DefaultSearchFactor
	}
	if s.Max <= 0 {
		s.Max = DefaultMaxConcurrency
		if s.open() {
			s.Max = DefaultMaxRate
		}
	}
	if s.Resolution <= 0 {
		s.Resolution = DefaultRateResolution
	}
	return s
}

func (s Search) open() bool { return s.Start.Rate > 0 }

// load turns a value into a load of the search's kind.
func (s Search) load(v float64) record.Load {
	if s.open() {
		return record.Load{Workload: s.Start.Workload, Rate: v, MaxConcurrency: s.Start.MaxConcurrency}
	}
	return record.Load{Workload: s.Start.Workload, Concurrency: int(v)}
}

// round keeps concurrencies whole and rates to three significant digits.
func (s Search) round(v float64) float64 {
	if !s.open() {
		return math.Max(1, math.Floor(v))
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}

// narrow reports whether the bracket [pass, fail] needs no more probes.
func (s Search) narrow(pass, fail float64) bool {
	if !s.open() {
		return fail-pass <= 1
	}
	return fail-pass <= s.Resolution*pass
}

// Run performs the search. On error (the context ended, a probe could not
// run) it returns what it had found so far with the error.
func (s Search) Run(ctx context.Context, probe Probe) (Capacity, error) {
	s = s.defaults()
	b := &bracket{s: s, probe: probe, capy: Capacity{Method: "search", FailedSLOs: []string{}, Shortfalls: []string{}}}
	start := s.round(LoadValue(s.Start))
	ok, err := b.try(ctx, start)
	if err != nil {
		return b.capy, err
	}
	switch {
	case b.stopped:
	case ok:
		err = b.rampUp(ctx, start)
	default:
		err = b.rampDown(ctx, start)
	}
	if err == nil {
		err = b.bisect(ctx)
	}
	return b.capy, err
}

// bracket is a search in progress: the highest load that passed and the
// lowest that failed.
type bracket struct {
	s          Search
	probe      Probe
	pass, fail float64 // 0: none yet
	capy       Capacity
	stopped    bool // a probe was no evidence: the search ends where it is
}

// try probes one load and narrows the bracket.
func (b *bracket) try(ctx context.Context, v float64) (bool, error) {
	pv, err := b.probe(ctx, b.s.load(v))
	if err != nil {
		return false, err
	}
	b.capy.Probes++
	if Remeasurable(pv) && b.s.Again != nil {
		if pv, err = b.s.Again(ctx, b.s.load(v)); err != nil {
			return false, err
		}
		b.capy.Probes++
	}
	if pv.Failing == "" && pv.Inconclusive() && !pv.Validity.Has(metrics.InvalidLoadNotHeld) {
		// no load beyond here is judged, and none is claimed
		b.capy.BoundedBy, b.capy.Invalid = BoundedByInvalid, invalidText(pv)
		b.stopped = true
		return false, nil
	}
	if why := notHeldPass(pv); why != "" {
		b.capy.BoundedBy, b.capy.NotHeld = BoundedBySample, b.s.load(v).Text(record.LoadLong)+": "+why
		b.stopped = true
		return false, nil
	}
	if pv.Pass {
		b.pass = v
		l := b.s.load(v)
		b.capy.Found, b.capy.Load = true, &l
		return true, nil
	}
	b.fail = v
	l := b.s.load(v)
	b.capy.FailsAt, b.capy.FailedSLOs, b.capy.Shortfalls, b.capy.Overloaded = &l, pv.Failed, pv.Shortfalls, pv.Overloaded
	b.capy.Failing = pv.Failing
	return false, nil
}

func (b *bracket) rampUp(ctx context.Context, v float64) error {
	for v < b.s.Max {
		next := math.Min(b.s.round(v*b.s.Factor), b.s.Max)
		if next <= v {
			next = v + 1
		}
		ok, err := b.try(ctx, next)
		if err != nil || !ok {
			return err
		}
		v = next
	}
	b.capy.BoundedBy = BoundedBySearchLimit
	return nil
}

func (b *bracket) rampDown(ctx context.Context, v float64) error {
	floor := 1.0
	if b.s.open() {
		floor = v / math.Pow(b.s.Factor, searchFloorSteps)
	}
	for v > floor {
		next := math.Max(b.s.round(v/b.s.Factor), floor)
		if next >= v {
			return nil
		}
		ok, err := b.try(ctx, next)
		if err != nil || ok || b.stopped {
			return err
		}
		v = next
	}
	return nil
}

func (b *bracket) bisect(ctx context.Context) error {
	for b.pass > 0 && b.fail > 0 && !b.stopped && !b.s.narrow(b.pass, b.fail) {
		mid := b.s.round((b.pass + b.fail) / 2)
		if mid <= b.pass || mid >= b.fail {
			return nil
		}
		if _, err := b.try(ctx, mid); err != nil {
			return err
		}
	}
	return nil
}

// FromSweep reads the capacity off a sweep's verdicts (ordered by load):
// the highest load before the first failure.
func FromSweep(pts []PointVerdict) Capacity {
	c := Capacity{Method: "sweep", FailedSLOs: []string{}, Shortfalls: []string{}}
	for _, pv := range pts {
		l := pv.Load
		if pv.Failing == "" && pv.Inconclusive() && !pv.Validity.Has(metrics.InvalidLoadNotHeld) {
			c.BoundedBy, c.Invalid = BoundedByInvalid, invalidText(pv)
			break
		}
		if why := notHeldPass(pv); why != "" {
			c.BoundedBy, c.NotHeld = BoundedBySample, l.Text(record.LoadLong)+": "+why
			break
		}
		if !pv.Pass {
			c.FailsAt, c.FailedSLOs, c.Shortfalls, c.Overloaded = &l, pv.Failed, pv.Shortfalls, pv.Overloaded
			c.Failing = pv.Failing
			break
		}
		c.Found, c.Load = true, &l
	}
	return c
}

// notHeldPass says how a passing load fell short of its nominal load, or
// "" when it held it (or failed: a failure at less load stands).
func notHeldPass(pv PointVerdict) string {
	if !pv.Pass {
		return ""
	}
	if pv.NotHeld != "" {
		return pv.NotHeld
	}
	for _, r := range pv.Validity.Reasons {
		if r.Code == metrics.InvalidLoadNotHeld {
			return r.Text
		}
	}
	return ""
}

// Remeasurable reports whether a load's evidence is invalid for a reason
// that may pass when it is measured again: the simulator behind its
// clock, the client saturated, a server event. Too few samples or a load
// not held would be the same again.
func Remeasurable(pv PointVerdict) bool {
	return pv.Failing == "" && !pv.Validity.Without(metrics.InvalidFewSamples, metrics.InvalidLoadNotHeld).Valid()
}
