package load

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// DefaultGrace is how long in-flight requests may run on after an interrupt
// before they are cancelled: long enough for a typical streamed answer to
// finish, short enough that Ctrl-C feels prompt.
const DefaultGrace = 10 * time.Second

// Sender performs one request. rec arrives stamped with its identity, phase
// and ScheduledNS; the Sender sets SentNS immediately before the request is
// written and fills in everything else. Failures go into rec.Error.
type Sender func(ctx context.Context, rec *record.Record)

// Point describes one load point.
type Point struct {
	Index int
	Load  record.Load // Concurrency (closed loop) or Rate (open loop, optional MaxConcurrency)
	// Stop after Requests measured requests, or after Duration of measured
	// sending, whichever comes first; at least one must be set.
	Requests int
	Duration time.Duration
	// Warm-up: the first WarmupRequests requests, and every request scheduled
	// within WarmupDuration of the point's start, are recorded as warm-up.
	WarmupRequests int
	WarmupDuration time.Duration
	Arrival        Arrival // open loop: how arrivals are spaced
	Seed           uint64
	// Shard is the worker this point runs as (Shard.Part sets it): an
	// open loop sends only its own arrivals of the whole schedule.
	Shard Shard
	// Schedule, when set, is the open loop's arrivals, read in order
	// instead of drawn from Arrival (a replayed trace); Load.Rate is then
	// its nominal rate.
	Schedule *Schedule
}

// Schedule is an open-loop schedule read in order rather than drawn: a
// replayed trace's.
type Schedule struct {
	// Arrivals calls yield with each request's offset from the point's
	// start, in order, and its line in the trace; it stops when yield
	// returns false. Its error says why it stopped before its end.
	Arrivals func(yield func(off time.Duration, line int64) bool) error
	// Last is the offset of the last arrival.
	Last time.Duration
}

// Validate reports a point that cannot run.
func (p Point) Validate() error {
	switch {
	case p.Requests <= 0 && p.Duration <= 0:
		return fmt.Errorf("load point %d: set a request count or a duration", p.Index)
	case p.Load.Concurrency <= 0 && p.Load.Rate <= 0:
		return fmt.Errorf("load point %d: set a concurrency or a request rate", p.Index)
	case p.Load.Concurrency > 0 && p.Load.Rate > 0:
		return fmt.Errorf("load point %d: concurrency and rate are exclusive", p.Index)
	case p.Load.Rate > 0:
		if err := p.Arrival.Validate(); err != nil {
			return fmt.Errorf("load point %d: %w", p.Index, err)
		}
	}
	return nil
}

// Client describes the load generator itself during a point.
type Client = record.ClientStats

// Runner runs load points. Emit receives every record once it is complete;
// it is called from many goroutines and must be safe for that.
type Runner struct {
	Epoch time.Time
	Send  Sender
	Emit  func(*record.Record)
	Grace time.Duration
	// Halt, when it closes, stops the run at once: nothing more is sent
	// and the requests in flight are cancelled without a grace (the
	// records file failed: their records would be lost).
	Halt <-chan struct{}

	nextID atomic.Int64
	// lagMax is the largest open-loop dispatch lag (ns, plus one so that
	// zero means none) since TakeDispatchLag last read it.
	lagMax atomic.Int64
}

// TakeDispatchLag returns the largest lag of an open-loop send behind its
// schedule since the previous call, and resets it; ok is false when no
// open-loop request was dispatched meanwhile (a closed loop, or idle).
// It is safe to call from any goroutine while points run: the sampler
// reads the client's pace without touching the dispatcher's own figures.
func (r *Runner) TakeDispatchLag() (lag time.Duration, ok bool) {
	v := r.lagMax.Swap(0)
	return time.Duration(v - 1), v > 0
}

// noteLag raises the lag TakeDispatchLag reports to d if d is larger.
func (r *Runner) noteLag(d time.Duration) {
	v := int64(max(d, 0)) + 1
	for old := r.lagMax.Load(); v > old && !r.lagMax.CompareAndSwap(old, v); old = r.lagMax.Load() {
	}
}

// Run runs one load point until its stop condition or until ctx is
// cancelled; then in-flight requests get Grace to finish before they are
// cancelled. Every request that was sent is emitted. A point whose
// requests cannot connect stops early with a *ConnectError: nothing more
// is sent, and the requests already sent are emitted.
func (r *Runner) Run(ctx context.Context, p Point) (Client, error) {
	if err := p.Validate(); err != nil {
		return Client{}, err
	}
	interrupt := ctx
	ctx, halted := r.halting(ctx)
	defer halted()
	reqCtx, cancel := withGrace(ctx, r.grace(), r.Halt)
	defer cancel()
	// stop ends sending (an interrupt, a halt, or the breaker tripping);
	// requests in flight still run under reqCtx.
	stop, stopSending := context.WithCancel(ctx)
	defer stopSending()
	brk := &breaker{trip: stopSending}
	cpu0, wall0 := CPUSeconds(), time.Now()
	var c Client
	var err error
	if p.Load.Rate > 0 {
		c, err = r.open(ctx, stop, reqCtx, p, brk)
	} else {
		c = r.closed(stop, reqCtx, p, brk)
	}
	if err == nil {
		err = brk.err()
	}
	c.CPUSeconds = CPUSeconds() - cpu0
	if wall := time.Since(wall0).Seconds(); wall > 0 {
		c.CPUPercent = 100 * c.CPUSeconds / wall
	}
	c.Interrupted = interrupt.Err() != nil
	return c, err
}

// halting is ctx, also cancelled when Halt closes.
func (r *Runner) halting(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if r.Halt == nil {
		return ctx, cancel
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-r.Halt:
			cancel()
		case <-stop:
		}
	}()
	return ctx, func() { close(stop); cancel() }
}

func (r *Runner) grace() time.Duration {
	if r.Grace > 0 {
		return r.Grace
	}
	return DefaultGrace
}

// abortKey carries the channel that ends the grace period early.
type abortKey struct{}

// WithAbort returns a copy of ctx carrying abort. Once ctx is done, requests
// in flight are normally given the grace period to finish; closing abort
// cancels them at once instead (a second Ctrl-C), so that each is still
// emitted, as cancelled, with the chunks it had received.
func WithAbort(ctx context.Context, abort <-chan struct{}) context.Context {
	return context.WithValue(ctx, abortKey{}, abort)
}

// Aborted is the abort channel ctx carries (WithAbort); nil when none.
func Aborted(ctx context.Context) <-chan struct{} {
	abort, _ := ctx.Value(abortKey{}).(<-chan struct{})
	return abort
}

// withGrace returns a context that is cancelled grace after parent is done,
// or as soon as the abort channel parent carries, or halt, is closed after
// that.
func withGrace(parent context.Context, grace time.Duration, halt <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	abort, _ := parent.Value(abortKey{}).(<-chan struct{})
	stop := context.AfterFunc(parent, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-abort: // nil without WithAbort: never ready
			cancel()
		case <-halt: // nil without Runner.Halt
			cancel()
		case <-ctx.Done():
		}
	})
	return ctx, func() { stop(); cancel() }
}

// gate decides, under a lock, the phase of each next request and whether
// the point's stop condition has been reached.
type gate struct {
	mu           sync.Mutex
	p            Point
	issued       int
	measured     int
	measureStart time.Duration // offset from point start; -1 until the first measured request
}

func newGate(p Point) *gate { return &gate{p: p, measureStart: -1} }

// next returns the phase of the request issued at offset at, or ok=false
// when the point is done.
func (g *gate) next(at time.Duration) (phase string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	phase = record.PhaseMeasured
	if g.issued < g.p.WarmupRequests || at < g.p.WarmupDuration {
		phase = record.PhaseWarmup
	} else {
		if g.measureStart < 0 {
			g.measureStart = at
		}
		if g.p.Requests > 0 && g.measured >= g.p.Requests {
			return "", false
		}
		if g.p.Duration > 0 && at-g.measureStart >= g.p.Duration {
			return "", false
		}
		g.measured++
	}
	g.issued++
	return phase, true
}

// end is the offset at which a duration-bound point stops sending: its
// Duration after the first measured request, or after the warm-up
// duration while no measured request was sent (a warm-up that never
// returns still ends).
func (g *gate) end() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.measureStart >= 0 {
		return g.measureStart + g.p.Duration
	}
	return g.p.WarmupDuration + g.p.Duration
}

func (r *Runner) newRecord(p Point, phase string, scheduled time.Time) *record.Record {
	return &record.Record{
		Schema: record.Schema, Point: p.Index, Load: p.Load, ID: r.nextID.Add(1) - 1,
		Phase: phase, ScheduledNS: int64(scheduled.Sub(r.Epoch)),
	}
}

// closed runs Concurrency virtual users; each schedules its next request
// the moment its previous one ends. A point bounded by a duration stops
// sending when it passes; the requests still in flight then drain as an
// open loop's do (drainFactor), so that a server that stopped answering
// cannot hold the point until the request timeout.
func (r *Runner) closed(ctx, reqCtx context.Context, p Point, brk *breaker) Client {
	g := newGate(p)
	start := time.Now()
	d := &drainer{r: r}
	d.reqCtx, d.cut = context.WithCancelCause(reqCtx)
	defer d.cut(nil)
	sending, over := context.WithCancel(ctx)
	defer over()
	var wg sync.WaitGroup
	var sent atomic.Int64
	for range p.Load.Concurrency {
		wg.Go(func() {
			for sending.Err() == nil {
				now := time.Now()
				phase, ok := g.next(now.Sub(start))
				if !ok {
					return
				}
				rec := r.newRecord(p, phase, now)
				sent.Add(1)
				r.Send(d.reqCtx, rec)
				d.settle(rec)
				brk.observe(rec)
				r.Emit(rec)
			}
		})
	}
	if p.Duration > 0 && g.waitEnd(sending, start, &wg) {
		over()
		d.drain(ctx, &wg)
	}
	wg.Wait()
	return Client{Sent: int(sent.Load()), InFlightPeak: p.Load.Concurrency}
}

// waitEnd waits until a duration-bound point is over: true when its
// duration passed with users still busy, false when they all returned
// first or ctx ended.
func (g *gate) waitEnd(ctx context.Context, start time.Time, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(time.Until(start.Add(g.end())))
	defer t.Stop()
	for {
		select {
		case <-done:
			return false
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		// the first measured request may have moved the end
		if left := time.Until(start.Add(g.end())); left > 0 {
			t.Reset(left)
			continue
		}
		return true
	}
}
