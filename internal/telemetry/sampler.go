package telemetry

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is how often each source is read: once a second
// resolves a load point of tens of seconds into enough readings, and a
// scrape a second costs a server (and the client) next to nothing.
const DefaultInterval = time.Second

// stopWait bounds how long Stop waits for reads in flight once their
// contexts are cancelled: a source that ignores its context must not hold
// the end of a run. A variable for the tests.
var stopWait = 2 * time.Second

// SamplerOptions configure a Sampler.
type SamplerOptions struct {
	// Epoch is the run's epoch, the one records are timed from, so that
	// samples and records share one clock.
	Epoch    time.Time
	Interval time.Duration // 0: DefaultInterval
	Sources  []Source
	// Out receives telemetry.jsonl, a sample a line as it comes; nil keeps
	// samples in memory only. With Out, a sample is kept in memory only
	// until its line is written (Written).
	Out io.Writer
	// Redact removes credentials from error text and from raw series'
	// labels before they are recorded.
	Redact func(string) string
	// Tap, when set, sees every sample as it is kept, under the sampler's
	// lock: it must return at once (the live view).
	Tap func(*Sample)
}

// Sampler reads every source once per interval, each in its own
// goroutine with the interval as its deadline, so that a slow source
// delays neither the requests, nor the other sources, nor the next tick
// (a source still reading when its next tick comes skips that tick).
// Every sample is written to Out at once, and kept in memory only where
// it could not be: without Out, or after a write error, so that the
// summaries have every sample (Written) and a run of any length costs
// the sampler no more memory than its first minute.
type Sampler struct {
	o      SamplerOptions
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	reads  sync.WaitGroup

	mu   sync.Mutex
	w    *bufio.Writer
	out  *countingWriter
	enc  *json.Encoder
	werr error
	// good is how many bytes of Out hold whole lines flushed without error;
	// pending are the samples encoded since, and kept the samples not
	// written: every one without Out, every one since a write error
	good    int64
	pending []Sample
	kept    []Sample
	taken   int
	states  []*sourceState
	// ticks so far: silence is counted in ticks, so that a starved
	// sampler (a loaded machine delays its ticker) blames no source
	ticks   int
	stopped bool
}

// sourceState is what the sampler knows of one source between reads.
type sourceState struct {
	src        Source
	name       string
	busy       atomic.Bool
	lastOK     int64 // run clock of the last read that succeeded (or of the start)
	lastOKTick int   // and its tick
	failures   int   // failed reads in the current streak
	failFrom   int64 // when the streak began
	silent     bool  // a gap event was written for the current silence
	silentTick int   // at which tick
}

// StartSampler starts sampling at once; Stop ends it.
func StartSampler(o SamplerOptions) *Sampler {
	s := newSampler(o)
	s.done = make(chan struct{})
	go func() { defer close(s.done); s.loop() }()
	return s
}

func newSampler(o SamplerOptions) *Sampler {
	o.Interval = cmp.Or(o.Interval, DefaultInterval)
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sampler{o: o, ctx: ctx, cancel: cancel}
	if o.Out != nil {
		s.out = &countingWriter{w: o.Out}
		s.w = bufio.NewWriter(s.out)
		s.enc = json.NewEncoder(s.w)
	}
	start := s.now()
	for _, src := range o.Sources {
		s.states = append(s.states, &sourceState{src: src, name: src.Name(), lastOK: start})
	}
	return s
}

// now is the run clock: ns since the epoch, on the monotonic clock.
func (s *Sampler) now() int64 { return int64(time.Since(s.o.Epoch)) }

func (s *Sampler) loop() {
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	s.tick(s.now())
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.tick(s.now())
		}
	}
}

// tick writes what the last reads produced, notes sources gone silent,
// and starts a read of every source that is not still reading.
func (s *Sampler) tick(now int64) {
	s.mu.Lock()
	tick := s.ticks
	s.ticks++
	for _, st := range s.states {
		s.checkGap(st, now, tick)
	}
	s.flush()
	s.mu.Unlock()
	for _, st := range s.states {
		if st.busy.CompareAndSwap(false, true) {
			s.reads.Add(1)
			go s.read(st, now, tick)
		}
	}
}

// read takes one reading of a source and keeps what it gave.
func (s *Sampler) read(st *sourceState, at int64, tick int) {
	defer s.reads.Done()
	defer st.busy.Store(false)
	ctx, cancel := context.WithTimeout(s.ctx, s.o.Interval)
	got, err := st.src.Read(ctx, at)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.ctx.Err() != nil {
		return // the run ended during the read: no failure of the source
	}
	for _, smp := range got {
		if smp.TNS == 0 {
			smp.TNS = at
		}
		s.put(smp)
	}
	if err != nil {
		s.failed(st, at, err)
		return
	}
	if st.silent && tick < st.silentTick {
		return // a read begun before the gap was noted does not end it
	}
	s.recovered(st, at)
	st.lastOK, st.lastOKTick = at, tick
}

// failed records a failed read: one scrape_failed event per streak of
// failures, with the first error.
func (s *Sampler) failed(st *sourceState, at int64, err error) {
	st.failures++
	if st.failures > 1 {
		return
	}
	st.failFrom = at
	if err == context.DeadlineExceeded || strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		err = fmt.Errorf("no answer within %v (the sample interval): %w", s.o.Interval, err)
	}
	s.event(at, EventScrapeFailed, st.name, err.Error())
}

// recovered notes that a source answers again after failing or falling
// silent, so that the timeline says when the trouble ended.
func (s *Sampler) recovered(st *sourceState, at int64) {
	if st.failures == 0 && !st.silent {
		return
	}
	var why string
	switch {
	case st.failures > 0:
		why = fmt.Sprintf("answers again after %d failed reads over %.1f s", st.failures, seconds(at-st.failFrom))
	default:
		why = fmt.Sprintf("answers again after %.1f s without a reading", seconds(at-st.lastOK))
	}
	st.failures, st.silent = 0, false
	s.event(at, EventRecovered, st.name, why)
}

// checkGap writes a gap event when a source has given no reading for
// more than two intervals (ticks), once per silence.
func (s *Sampler) checkGap(st *sourceState, now int64, tick int) {
	if st.silent || tick-st.lastOKTick <= 2 {
		return
	}
	st.silent, st.silentTick = true, tick
	s.event(now, EventGap, st.name, fmt.Sprintf("no reading for %.1f s", seconds(now-st.lastOK)))
}

func (s *Sampler) event(at int64, kind, source, detail string) {
	s.put(Sample{TNS: at, Source: KindEvent, Instance: source,
		Event: &Event{Kind: kind, Source: source, Detail: oneLine(s.o.Redact(detail))}})
}

// put keeps a sample and writes its line; under mu. A write error is kept
// for Stop and the sample still counts.
func (s *Sampler) put(smp Sample) {
	smp.Raw = redactKeys(smp.Raw, s.o.Redact)
	s.taken++
	if s.o.Tap != nil {
		s.o.Tap(&smp)
	}
	if s.enc == nil || s.werr != nil {
		s.kept = append(s.kept, smp)
		return
	}
	s.pending = append(s.pending, smp)
	if err := s.enc.Encode(smp); err != nil {
		s.writeFailed(err)
	}
}

// writeFailed keeps err for Stop, and in memory every sample whose line
// may not be whole in Out; under mu.
func (s *Sampler) writeFailed(err error) {
	s.werr = err
	s.kept = append(s.kept, s.pending...)
	s.pending = nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// redactKeys removes credentials from raw series' labels: an engine may
// label a series with the API key a request came with. Two series whose
// labels differ only in a credential are summed (their counts add, and
// which is which must not be told).
func redactKeys(raw map[string]float64, redact func(string) string) map[string]float64 {
	if raw == nil {
		return nil
	}
	out := make(map[string]float64, len(raw))
	for k, v := range raw {
		out[redact(k)] += v
	}
	return out
}

// flush pushes the buffered lines to Out; under mu.
func (s *Sampler) flush() {
	if s.w == nil || s.werr != nil {
		return
	}
	if err := s.w.Flush(); err != nil {
		s.writeFailed(err)
		return
	}
	s.good, s.pending = s.out.n, s.pending[:0]
}

// Stop ends sampling: no new reads, reads in flight are cancelled (and
// waited for a moment), and what is buffered is written. It returns the
// first write error: Written still gives every sample whatever it is.
func (s *Sampler) Stop() error {
	s.cancel()
	if s.done != nil {
		<-s.done
	}
	waited := make(chan struct{})
	go func() { s.reads.Wait(); close(waited) }()
	select {
	case <-waited:
		s.closeSources()
	case <-time.After(stopWait):
		// a read still hangs: its source is left open rather than closed under it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.flush()
	return s.werr
}

// closeSources releases what a source holds open between reads (NVML
// and its event set), once no read is in flight.
func (s *Sampler) closeSources() {
	for _, st := range s.states {
		CloseSource(st.src)
	}
}

// CloseSource releases what src holds (a connection, an open file), for
// the sources that hold something: they are io.Closers. A source that is
// made and never sampled must be closed too.
func CloseSource(src Source) {
	if c, ok := src.(io.Closer); ok {
		c.Close()
	}
}

// Written flushes the lines buffered for Out and returns how many bytes
// of Out hold whole lines written without error (to be read back with
// ScanSamples), and a copy of the samples not among them, in the order
// taken: every sample without Out, those since a write error with it.
// Between the two is every sample taken so far, once.
func (s *Sampler) Written() (n int64, kept []Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush()
	return s.good, slices.Clone(s.kept)
}

// Taken is how many samples were taken so far.
func (s *Sampler) Taken() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// Samples returns a copy of the samples kept in memory (Written), in
// time order.
func (s *Sampler) Samples() []Sample {
	_, out := s.Written()
	slices.SortStableFunc(out, func(a, b Sample) int { return cmp.Compare(a.TNS, b.TNS) })
	return out
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }
