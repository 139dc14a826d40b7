package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/servebench/servebench/internal/record"
)

// Achieved load. A closed loop holds its load while at least heldFraction
// of its users have a request in flight; a point that does so for less
// than heldShareMin of its window (too few requests for its users, or a
// long tail) was not measured at its nominal load. An open loop holds its
// rate when it sent at heldFraction of the rate its schedule offered and
// dropped no more than 1 − heldFraction of the arrivals.
const (
	heldFraction = 0.9
	heldShareMin = 0.5
)

// Overload evidence in an open loop. Arrivals outpace completions when,
// from the first quarter of the arrivals to the last one, fewer than
// heldFraction of the arrivals completed (the queue in flight grew by more
// overloadSpanE2E times the median request; or when timeouts are more than
// half of the requests that ended.
const (
	overloadMinRequests = 10
)

// Overload is the evidence that an open loop's server did not keep up.
type Overload struct {
	Reason         string  `json:"reason"`
	InFlightStart  int     `json:"in_flight_start"` // when a quarter of the arrivals had been sent
	InFlightEnd    int     `json:"in_flight_end"`   // at the last arrival
	ArrivalRate    float64 `json:"arrivals_per_s"`
	CompletionRate float64 `json:"completions_per_s"`
	Timeouts       int     `json:"timeouts"`
}

// achieved fills in the point's achieved load and whether it held.
func (p *pointAgg) achieved(s *PointSummary) {
	if p.measured == 0 {
		return
	}
	if c := p.load.Concurrency; c > 0 {
		thr := int(math.Ceil(heldFraction * float64(c)))
		// A user thinking between the turns of its session is busy with
		// the load, though nothing is in flight.
		iv := append(slices.Clone(p.intervals), thinking(p.turns)...)
		s.ConcurrencyHeldShare = heldShare(iv, thr, p.firstSent, p.lastEnd)
		if p.sw != nil && p.lastEnd > p.firstSent {
			_, held := p.sw.final()
			s.ConcurrencyHeldShare = float64(held) / float64(p.lastEnd-p.firstSent)
		}
		s.LoadHeld = s.ConcurrencyHeldShare >= heldShareMin
		return
	}
	var first, last int64
	for i, v := range p.intervals {
		if i == 0 || v.start < first {
			first = v.start
		}
		last = max(last, v.start)
	}
	if p.measured > 1 && last > first {
		s.AchievedRate = float64(p.measured-1) / (float64(last-first) / 1e9)
	}
	s.LoadHeld = s.OfferedRate == 0 || s.AchievedRate >= heldFraction*s.OfferedRate
}

// turn is one measured request of a multi-turn session.
type turn struct {
	session, turn int
	sched, end    int64
}

// thinking returns, for each turn that followed its session's previous
// one, the time from that one's end to this one's scheduled time: the
// user's think time (a closed loop schedules a turn when it is ready).
func thinking(turns []turn) []interval {
	s := slices.Clone(turns)
	slices.SortFunc(s, func(a, b turn) int { return cmp.Or(cmp.Compare(a.session, b.session), cmp.Compare(a.turn, b.turn)) })
	var out []interval
	for i := 1; i < len(s); i++ {
		prev, cur := s[i-1], s[i]
		if cur.session == prev.session && cur.turn == prev.turn+1 && cur.sched > prev.end {
			out = append(out, interval{prev.end, cur.sched, true})
		}
	}
	return out
}

// heldShare is the share of [from, to] with at least thr intervals open.
func heldShare(iv []interval, thr int, from, to int64) float64 {
	if to <= from {
		return 0
	}
	var held int64
	sweep(iv, func(t0, t1 int64, open int) {
		if open >= thr {
			held += min(t1, to) - max(t0, from)
		}
	})
	return float64(held) / float64(to-from)
}

// sweep calls f for each stretch [t0, t1) with the number of intervals
// open during it; an interval ending when another starts does not overlap.
func sweep(iv []interval, f func(t0, t1 int64, open int)) {
	type edge struct {
		t     int64
		delta int
	}
	edges := make([]edge, 0, 2*len(iv))
	for _, v := range iv {
		edges = append(edges, edge{v.start, +1}, edge{v.end, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].delta < edges[j].delta
	})
	open := 0
	for i, e := range edges {
		open += e.delta
		if i+1 < len(edges) && edges[i+1].t > e.t {
			f(e.t, edges[i+1].t, open)
		}
	}
}

// inFlightAt counts the intervals open at t.
func inFlightAt(iv []interval, t int64) int {
	n := 0
	for _, v := range iv {
		if v.start <= t && t < v.end {
			n++
		}
	}
	return n
}

// rampedUp reports whether the requests in flight at t0 reflect a steady
// state: the median request sent before t0 that completed took no longer
// than the time from the first arrival to t0 (or none completed at all).
func rampedUp(iv []interval, first, t0 int64) bool {
	var e2e []int64
	for _, v := range iv {
		if v.start < t0 && v.ok {
			e2e = append(e2e, v.end-v.start)
		}
	}
	if len(e2e) == 0 {
		return true
	}
	sort.Slice(e2e, func(i, j int) bool { return e2e[i] < e2e[j] })
	return e2e[len(e2e)/2] <= t0-first
}

// overload returns the evidence that an open loop was overloaded, or nil.
func (p *pointAgg) overload() *Overload {
	if p.load.Rate <= 0 || len(p.intervals) < overloadMinRequests {
		return nil
	}
	starts := make([]int64, len(p.intervals))
	for i, v := range p.intervals {
		starts[i] = v.start
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	t0, t1 := starts[len(starts)/4], starts[len(starts)-1]
	o := &Overload{InFlightStart: inFlightAt(p.intervals, t0), InFlightEnd: inFlightAt(p.intervals, t1),
		Timeouts: p.errors[record.ClassTimeoutFirst] + p.errors[record.ClassTimeoutMid]}
	if t1 > t0 {
		arrived, ended := 0, 0
		for _, v := range p.intervals {
			if v.start > t0 && v.start <= t1 {
				arrived++
			}
			if v.end > t0 && v.end <= t1 {
				ended++
			}
		}
		span := float64(t1-t0) / 1e9
		o.ArrivalRate, o.CompletionRate = float64(arrived)/span, float64(ended)/span
		grew := o.InFlightEnd - o.InFlightStart
		noise := 2 * math.Sqrt(float64(o.InFlightStart)+1)
		if rampedUp(p.intervals, starts[0], t0) && o.CompletionRate < heldFraction*o.ArrivalRate && float64(grew) > max(noise, (1-heldFraction)*float64(arrived)) {
			o.Reason = fmt.Sprintf("arrivals outpaced completions: %.1f/s arrived, %.1f/s ended, and the requests in flight grew from %d to %d",
				o.ArrivalRate, o.CompletionRate, o.InFlightStart, o.InFlightEnd)
		}
	}
	if o.Reason == "" && 2*o.Timeouts > p.completed+p.failed {
		o.Reason = fmt.Sprintf("timeouts dominate: %d of %d requests timed out", o.Timeouts, p.completed+p.failed)
	}
	if o.Reason == "" {
		return nil
	}
	return o
}

// loadWarnings says when a point did not hold its load or was overloaded.
func (p *pointAgg) loadWarnings(s PointSummary) []string {
	var w []string
	// An all-failed point says so already, and louder.
	if p.measured > 0 && !s.LoadHeld && !s.AllFailed && p.load.Concurrency > 0 {
		w = append(w, fmt.Sprintf("load not held: %.1f of %d users in flight on average, at least %d for only %.0f%% of the window (%d requests for %d users): not a measurement at %s, nor capacity evidence; send several requests per user",
			s.ConcurrencyAchieved, p.load.Concurrency, int(math.Ceil(heldFraction*float64(p.load.Concurrency))),
			100*s.ConcurrencyHeldShare, p.measured, p.load.Concurrency, p.load.Label()))
	}
	if p.measured > 0 && !s.LoadHeld && !s.AllFailed && p.load.Rate > 0 {
		w = append(w, fmt.Sprintf("load not held: %.3g req/s sent of the %.3g offered: not a measurement at %s, nor capacity evidence",
			s.AchievedRate, s.OfferedRate, p.load.Label()))
	}
	if o := s.Overload; o != nil {
		w = append(w, "overloaded: "+o.Reason+"; the server does not keep up with this load")
	}
	return w
}
