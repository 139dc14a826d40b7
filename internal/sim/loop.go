package sim

import (
	"errors"
	"sync"
	"time"
)

// errShutdown fails requests still in flight when the server closes.
var errShutdown = errors.New("server shutting down")

// rebaseLag is how far behind its wall-clock deadlines the loop may fall
// before it stops catching up and moves its virtual clock forward: past it
// the host, not the model, is the bottleneck, and catching up would deliver
// tokens faster than the model allows.
const rebaseLag = 5 * time.Millisecond

// mailbox carries one request's progress from the scheduler goroutine to
// the goroutine serving it: the scheduler never blocks on a slow client.
type mailbox struct {
	notify chan struct{} // capacity 1: "something changed"

	mu     sync.Mutex
	tokens int  // tokens generated so far
	done   bool // finished (or failed)
	err    error
	timing reqTiming
}

// reqTiming is a finished request's server-side timeline, in the wall time
// base a client measures (model time / time_scale), relative to arrival.
type reqTiming struct {
	Queue       time.Duration // through the request overhead → first scheduled
	Prefill     time.Duration // first scheduled → first token
	Decode      time.Duration // first token → last token
	E2E         time.Duration // arrival → last token
	Prompt      int
	Cached      int // prompt tokens found in the prefix cache
	Generated   int
	Preemptions int // times preempted and recomputed
}

func newMailbox() *mailbox { return &mailbox{notify: make(chan struct{}, 1)} }

// snapshot returns the current progress and the request's failure, if any.
func (m *mailbox) snapshot() (tokens int, done bool, t reqTiming, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens, m.done, m.timing, m.err
}

func (m *mailbox) signal() {
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

// loop owns the engine and runs it against the wall clock: step k ends at
// the absolute deadline start + (model time)/time_scale, so timer overshoot
// never accumulates.
type loop struct {
	eng   *engine
	scale float64
	wall0 time.Time
	met   *metrics

	mu     sync.Mutex
	inbox  []*seq
	wallAt []time.Time
	aborts []*seq
	closed bool

	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newLoop(cfg Config, met *metrics) *loop {
	l := &loop{eng: newEngine(cfg), scale: cfg.TimeScale, wall0: time.Now(), met: met,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// submit queues a request; its progress arrives in s.box.
func (l *loop) submit(s *seq) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errShutdown
	}
	l.inbox = append(l.inbox, s)
	l.wallAt = append(l.wallAt, time.Now())
	l.mu.Unlock()
	l.poke()
	return nil
}

// abort withdraws a request whose client went away.
func (l *loop) abort(s *seq) {
	l.mu.Lock()
	l.aborts = append(l.aborts, s)
	l.mu.Unlock()
	l.poke()
}

func (l *loop) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *loop) close() {
	l.mu.Lock()
	already := l.closed
	l.closed = true
	l.mu.Unlock()
	if !already {
		close(l.quit)
	}
	<-l.done
}

// virtual converts a wall time to model seconds.
func (l *loop) virtual(t time.Time) float64 { return t.Sub(l.wall0).Seconds() * l.scale }

// wallOf converts model seconds to the wall time they are due.
func (l *loop) wallOf(v float64) time.Time {
	return l.wall0.Add(time.Duration(v / l.scale * 1e9))
}

func (l *loop) run() {
	defer close(l.done)
	defer l.shutdown()
	defer lockForPreciseSleep()()
	sl := newSleeper()
	for {
		select {
		case <-l.quit:
			return
		default:
		}
		l.intake()
		if l.eng.idle() {
			select {
			case <-l.wake:
				continue
			case <-l.quit:
				return
			}
		}
		begun := time.Now()
		out, ok := l.eng.step()
		if !ok {
			continue
		}
		// While the step runs, its batch is running: the gauges say so
		// now, not only after its tokens are delivered (vLLM logs them as
		// each step is scheduled).
		l.met.scheduled(out, l.eng)
		if out.dur > 0 && !sl.until(l.due(begun, out.dur), l.quit) {
			return
		}
		l.deliver(out)
	}
}

// maxCatchUp is the share of a step's time by which a late loop may
// shorten it to catch up with its schedule: a timer's overshoot is made
// up over a few steps, but tokens never come faster than the model allows
// by more than that share. Lateness beyond what this recovers grows to
// rebaseLag, and is then skipped and counted (intake).
const maxCatchUp = 0.5

// due is when a step of model duration dur begun at begun ends: its slot
// on the schedule, or, when the loop runs late, no sooner than
// (1 − maxCatchUp) of its duration after it began. Without the floor a
// loop behind by more than a step delivered several steps' tokens at once
// (at time scale 300, a decode speed of thousands of tokens/s).
func (l *loop) due(begun time.Time, dur float64) time.Time {
	at := l.wallOf(l.eng.now)
	if floor := begun.Add(time.Duration(dur / l.scale * (1 - maxCatchUp) * 1e9)); at.Before(floor) {
		return floor
	}
	return at
}

// intake moves new requests and aborts into the engine at a step boundary.
// An idle engine's clock jumps to now; a busy one keeps its schedule unless
// it has fallen more than rebaseLag behind, and the time it then skips is
// counted: the simulated GPU served less than the model in it.
func (l *loop) intake() {
	l.mu.Lock()
	inbox, wallAt, aborts := l.inbox, l.wallAt, l.aborts
	l.inbox, l.wallAt, l.aborts = nil, nil, nil
	l.mu.Unlock()
	now := l.virtual(time.Now())
	switch behind := now - l.eng.now; {
	case l.eng.idle():
		l.eng.now = max(l.eng.now, now)
	case behind > rebaseLag.Seconds()*l.scale:
		// The host ran the loop late: the engine skips the time it could
		// not serve, and says so (servebench_sim_clock_lost_seconds_total).
		l.eng.now = now
		l.met.clockLost(behind / l.scale)
	}
	for i, s := range inbox {
		l.eng.add(s, min(l.virtual(wallAt[i]), l.eng.now))
	}
	for _, s := range aborts {
		if s.state != stDone {
			l.eng.abort(s)
			l.finish(s, errAborted)
		}
	}
	if len(inbox)+len(aborts) > 0 {
		l.met.queue(l.eng)
	}
}

var errAborted = errors.New("aborted by the client")

// deliver hands a finished step's tokens to their requests.
func (l *loop) deliver(out *stepOut) {
	l.met.step(out, l.eng)
	for _, s := range out.produced {
		if s.state == stDone && s.err == nil {
			l.finish(s, nil)
			continue
		}
		s.box.mu.Lock()
		s.box.tokens = s.generated
		s.box.mu.Unlock()
		s.box.signal()
	}
	for _, s := range out.failed {
		l.finish(s, s.err)
	}
}

// finish closes a request's mailbox with its timing and records it.
func (l *loop) finish(s *seq, err error) {
	t := l.timing(s)
	l.met.finished(s, t, err)
	s.box.mu.Lock()
	s.box.tokens, s.box.done, s.box.err, s.box.timing = s.generated, true, err, t
	s.box.mu.Unlock()
	s.box.signal()
}

func (l *loop) timing(s *seq) reqTiming {
	w := func(v float64) time.Duration { return seconds(max(v, 0) / l.scale) }
	t := reqTiming{Prompt: s.prompt, Cached: s.cached, Generated: s.generated, Preemptions: s.preemptions}
	end := l.eng.now
	if s.scheduled >= 0 {
		t.Queue = w(s.scheduled - s.ready)
	} else {
		t.Queue = w(end - s.ready)
	}
	if s.firstToken >= 0 {
		t.Prefill = w(s.firstToken - s.scheduled)
		t.Decode = w(s.lastToken - s.firstToken)
		end = s.lastToken
	}
	t.E2E = w(end - s.arrival)
	return t
}

// shutdown fails everything still queued or running.
func (l *loop) shutdown() {
	l.mu.Lock()
	l.closed = true
	inbox := l.inbox
	l.inbox, l.wallAt = nil, nil
	l.mu.Unlock()
	for _, s := range inbox {
		s.arrival, s.ready, s.scheduled, s.firstToken = l.eng.now, l.eng.now, -1, -1
		l.finish(s, errShutdown)
	}
	for _, list := range [][]*seq{l.eng.running, l.eng.waiting} {
		for _, s := range list {
			s.state = stDone
			l.finish(s, errShutdown)
		}
	}
	l.eng.running, l.eng.waiting = nil, nil
}
