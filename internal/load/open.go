package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// drainFactor: after an open-loop point's last arrival, or the end of a
// closed loop's --duration, requests still in flight get the longer of
// Grace and drainFactor × the longest request that completed in the point.
// A server that keeps answering drains in full; one that stopped answering
// ends the point in bounded time.
const drainFactor = 2

// errDrained is the cause given to requests cut when the drain ends.
var errDrained = errors.New("the load point ended")

// scheduleLength is how many arrivals to precompute for an open-loop point.
func scheduleLength(p Point) int {
	n := p.WarmupRequests + int(math.Ceil(p.Load.Rate*p.WarmupDuration.Seconds()))
	if p.Requests > 0 {
		return n + p.Requests
	}
	// +1: the arrival at offset 0 plus one per gap in the duration.
	return n + int(math.Ceil(p.Load.Rate*p.Duration.Seconds())) + 1
}

// arrival is one request of an open-loop schedule: its offset from the
// point's start and its phase.
type arrival struct {
	k     int // index in the whole schedule
	off   time.Duration
	phase string
	line  int64 // a replayed trace's line (Schedule); 0 otherwise
}

// arrivals are the requests of the schedule that p's shard sends, with
// their phases, up to the point's stop. Every arrival counts at the gate,
// the other shards' too, so that phases and the stop are the same in every
// shard as in one process; the gate depends on the offsets alone, so the
// walk can be done ahead.
func arrivals(p Point, sched []time.Duration) []arrival {
	g := newGate(p)
	out := make([]arrival, 0, p.Shard.Share(len(sched)))
	for k, off := range sched {
		phase, ok := g.next(off)
		if !ok {
			break
		}
		if p.Shard.Owns(k) {
			out = append(out, arrival{k: k, off: off, phase: phase})
		}
	}
	return out
}

// dispatcher is an open-loop point in progress: it sends each arrival at
// its scheduled time, within the concurrency cap, and tracks what is in
// flight.
type dispatcher struct {
	p     Point
	brk   *breaker
	sem   chan struct{} // nil: no cap
	start time.Time
	end   time.Time // the point's last arrival: after it nothing is sent
	freed time.Time // when the last wait for a place under the cap ended

	wg             sync.WaitGroup
	inflight, peak atomic.Int64
	lag            stats.Sample
	sent, dropped  int
	drainer
}

// drainer ends a point's requests in flight once the point is over: it
// gives them the drain (drainFactor), then cuts them, and records each cut
// request as the timeout it is for the user.
type drainer struct {
	r       *Runner
	longest atomic.Int64 // ns, the longest request that completed
	reqCtx  context.Context
	cut     context.CancelCauseFunc
}

// open sends requests at precomputed arrival times. An arrival that finds
// the concurrency cap full waits in the client (its queue time shows it)
// until the point's last arrival; after that it is dropped, not sent late.
// Requests still in flight then drain (see drainFactor).
// ctx is the run's (an interrupt), stop also ends when the breaker trips.
func (r *Runner) open(ctx, stop, reqCtx context.Context, p Point, brk *breaker) (Client, error) {
	if p.Schedule != nil {
		return r.replay(ctx, stop, reqCtx, p, brk)
	}
	sched, err := p.Arrival.Schedule(p.Load.Rate, scheduleLength(p), p.Seed)
	if err != nil {
		return Client{}, err
	}
	// Walked before the start, so that the walk delays no arrival.
	arr := arrivals(p, sched)
	d := r.newDispatcher(p, brk, sched[len(sched)-1], reqCtx)
	defer d.cut(nil)
	d.dispatch(stop, func(yield func(arrival) bool) error {
		for _, a := range arr {
			if !yield(a) {
				break
			}
		}
		return nil
	})
	d.drain(ctx, &d.wg)
	return d.client(), nil
}

// replay sends a point's Schedule: as open does, but the arrivals are
// read as they come (a trace too large to hold), and each phase is found
// at the gate as the arrival goes.
func (r *Runner) replay(ctx, stop, reqCtx context.Context, p Point, brk *breaker) (Client, error) {
	d := r.newDispatcher(p, brk, p.Schedule.Last, reqCtx)
	defer d.cut(nil)
	g := newGate(p)
	k := 0
	err := d.dispatch(stop, func(yield func(arrival) bool) error {
		return p.Schedule.Arrivals(func(off time.Duration, line int64) bool {
			phase, ok := g.next(off)
			if !ok {
				return false
			}
			k++
			if !p.Shard.Owns(k - 1) {
				return true
			}
			return yield(arrival{k: k - 1, off: off, phase: phase, line: line})
		})
	})
	d.drain(ctx, &d.wg)
	return d.client(), err
}

// newDispatcher starts an open-loop point whose last arrival is at last.
func (r *Runner) newDispatcher(p Point, brk *breaker, last time.Duration, reqCtx context.Context) *dispatcher {
	d := &dispatcher{p: p, brk: brk, start: time.Now()}
	d.r = r
	d.end = d.start.Add(last)
	if p.Duration > 0 {
		d.end = d.start.Add(max(last, p.WarmupDuration+p.Duration))
	}
	if p.Load.MaxConcurrency > 0 {
		d.sem = make(chan struct{}, p.Load.MaxConcurrency)
	}
	d.reqCtx, d.cut = context.WithCancelCause(reqCtx)
	return d
}

// dispatch walks the point's arrivals until they end or ctx is done; the
// error is the arrivals' own (a schedule that could not be read through).
func (d *dispatcher) dispatch(ctx context.Context, arrivals func(yield func(arrival) bool) error) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	return arrivals(func(a arrival) bool {
		target := d.start.Add(a.off)
		if !sleepUntil(ctx, timer, target) {
			return false
		}
		// Lag is the dispatcher's own lateness: time spent waiting for a
		// place under the cap (for this arrival or the one before) is the
		// server's doing and shows as queue time instead.
		lag := time.Since(later(target, d.freed))
		d.lag.Add(float64(lag) / 1e6)
		d.r.noteLag(lag)
		ok := d.acquire(ctx, timer)
		d.freed = time.Now()
		if !ok {
			if ctx.Err() != nil {
				return false
			}
			d.dropped++
			return true
		}
		rec := d.r.newRecord(d.p, a.phase, target)
		rec.TraceLine = a.line
		d.send(rec)
		return true
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	if d := time.Until(t); d > 0 {
		timer.Reset(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// acquire takes a place under the concurrency cap, waiting no later than
// the point's last arrival; false when none came in time.
func (d *dispatcher) acquire(ctx context.Context, timer *time.Timer) bool {
	if d.sem == nil {
		return true
	}
	select {
	case d.sem <- struct{}{}:
		return true
	default:
	}
	wait := time.Until(d.end)
	if wait <= 0 {
		return false
	}
	timer.Reset(wait)
	defer func() {
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}()
	select {
	case d.sem <- struct{}{}:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// send performs one request in its own goroutine.
func (d *dispatcher) send(rec *record.Record) {
	d.sent++
	n := d.inflight.Add(1)
	for old := d.peak.Load(); n > old && !d.peak.CompareAndSwap(old, n); old = d.peak.Load() {
	}
	d.wg.Go(func() {
		d.r.Send(d.reqCtx, rec)
		d.inflight.Add(-1)
		if d.sem != nil {
			<-d.sem
		}
		d.settle(rec)
		d.brk.observe(rec)
		d.r.Emit(rec)
	})
}

// settle notes a completed request's length, and turns the cancellation of
// a request cut by the drain into the timeout it is for the user.
func (d *drainer) settle(rec *record.Record) {
	if rec.Error == nil {
		for e, old := rec.EndNS-rec.SentNS, d.longest.Load(); e > old && !d.longest.CompareAndSwap(old, e); old = d.longest.Load() {
		}
		return
	}
	if rec.Error.Class != record.ClassCancelled || !errors.Is(context.Cause(d.reqCtx), errDrained) {
		return
	}
	class := record.ClassTimeoutFirst
	if rec.FirstTokenNS != 0 {
		class = record.ClassTimeoutMid
	}
	waited := time.Duration(rec.EndNS - rec.ScheduledNS).Round(time.Millisecond)
	rec.Error = &record.Error{Class: class, Message: fmt.Sprintf(
		"unfinished %v after it was scheduled, when the load point ended (the drain after its last send allows the longer of --grace and %d× the longest completed request)",
		waited, drainFactor)}
}

// drain waits for the requests in flight (wg) after the point's last send,
// and cuts them once the drain limit passes. An interrupt leaves them to
// the grace period instead.
func (d *drainer) drain(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last := time.Now()
	limit := func() time.Duration { return max(d.r.grace(), drainFactor*time.Duration(d.longest.Load())) }
	for {
		t := time.NewTimer(time.Until(last.Add(limit())))
		select {
		case <-done:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			<-done
			return
		case <-t.C:
		}
		if time.Since(last) >= limit() {
			d.cut(errDrained)
			<-done
			return
		}
	}
}

func (d *dispatcher) client() Client {
	c := Client{Sent: d.sent, Dropped: d.dropped, InFlightPeak: int(d.peak.Load())}
	if d.lag.Len() > 0 {
		c.LagP50MS, c.LagP90MS = d.lag.Quantile(0.5), d.lag.Quantile(0.9)
		c.LagP99MS, c.LagMaxMS = d.lag.Quantile(0.99), d.lag.Quantile(1)
	}
	return c
}
