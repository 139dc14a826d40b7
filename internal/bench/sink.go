package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

// recordsFile is the records file as the sink uses it: an *os.File, or a
// test's file that fails.
type recordsFile interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// sink receives every record: it writes it to records.jsonl at once and
// folds it into the aggregator.
type sink struct {
	mu    sync.Mutex
	agg   metrics.Aggregator
	w     *record.Writer
	f     recordsFile
	lines *wholeLines    // f as w writes it
	out   *rundir.Writer // nil without a run directory
	n     int
	werr  error
	// failed closes at the first record that cannot be written: the run
	// stops at once (load.Runner.Halt), for a record not on disk is lost.
	failed chan struct{}
	notify func(*record.Record)
	// scale converts records to model time before they are aggregated,
	// observed or shown; the file keeps the measured times.
	scale float64
	// loads names each point's load as asked (model time), which records
	// carry even when the runner paces a sped-up target's wall-time load.
	loads map[int]record.Load
	// observe sees every record, under mu (Config.Observe); so does
	// watch, which also sees each send (Config.Watch).
	observe func(*record.Record)
	watch   Watcher
	// curves gather the HTML report's curves (Result.Curves).
	curves *metrics.Curves
	// spans are the points' measured windows and events the timeline
	// events records stand for, both on the records' clock.
	spans  map[int]*record.Span
	events []telemetry.Sample
	// sending holds the requests handed to the backend and not yet
	// emitted, with their scheduled times: what tells the aggregator
	// which instants no request still to come was sent before (settle).
	sending map[*record.Record]int64
	epoch   time.Time
	// gzip: the records file is a compressed stream (run --compress gzip).
	gzip bool
}

// settleEvery is how many records pass between two settle calls; and
// settleMargin covers a request scheduled and not yet handed over (a
// worker between its schedule and its send).
const (
	settleEvery  = 1024
	settleMargin = 10 * time.Second
)

// send notes that r is handed to the backend.
func (s *sink) send(r *record.Record) {
	s.mu.Lock()
	if s.sending == nil {
		s.sending = map[*record.Record]int64{}
	}
	s.sending[r] = r.ScheduledNS
	if s.watch != nil {
		s.watch.Sent()
	}
	s.mu.Unlock()
}

// settle tells the aggregator the earliest instant a request still to
// come can have been sent: the earliest scheduled of those in flight, or
// a margin before now. Under mu.
func (s *sink) settle() {
	w := int64(time.Since(s.epoch) - settleMargin)
	for _, t := range s.sending {
		w = min(w, t)
	}
	if s.scale > 0 && s.scale != 1 {
		w = int64(float64(w) * s.scale)
	}
	s.agg.Settled(w)
}

func newSink(dir, compress string) (*sink, error) {
	s := &sink{}
	if dir == "" {
		return s, nil
	}
	out, err := rundir.Create(dir, compress == CompressGzip)
	if err != nil {
		return nil, err
	}
	f := out.Records()
	s.out, s.f, s.lines, s.failed = out, f, &wholeLines{f: f}, make(chan struct{})
	s.w = record.NewWriter(s.lines)
	if compress == CompressGzip {
		// A compressed stream's writes are its flushes, not records:
		// the count on disk is the records the stream took (fail).
		s.w, s.gzip = record.NewGzipWriter(s.lines), true
	}
	return s, nil
}

// remove takes away what newSink created, for a run that could not start.
func (s *sink) remove() {
	if s.out != nil {
		s.out.Remove()
	}
}

// removeRun takes away run.json too, for a run that wrote it and then
// could not start.
func (s *sink) removeRun() {
	if s.out != nil {
		s.out.Remove()
		s.out.RemoveRun()
	}
}

// wholeLines is the records file as the writer sees it: a write that fails
// part-way is cut back off, so that the file ends at its last whole record.
type wholeLines struct {
	f     recordsFile
	size  int64
	lines int // whole records written
}

func (w *wholeLines) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	if err != nil {
		if t, ok := w.f.(interface{ Truncate(int64) error }); ok && n > 0 {
			t.Truncate(w.size)
		}
		return n, err
	}
	w.size += int64(n)
	w.lines++
	return n, nil
}

func (s *sink) onEmit(f func(*record.Record)) {
	s.mu.Lock()
	s.notify = f
	s.mu.Unlock()
}

// nominal records the load point p as asked, for the records of p.
func (s *sink) nominal(p load.Point) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loads == nil {
		s.loads = map[int]record.Load{}
	}
	s.loads[p.Index] = p.Load
}

func (s *sink) emit(r *record.Record) {
	r.Schema = record.Schema
	s.mu.Lock()
	delete(s.sending, r)
	if l, ok := s.loads[r.Point]; ok {
		r.Load = l
	}
	s.mu.Unlock()
	if s.w != nil {
		// The writer has its own lock. A record that is not on disk is not
		// counted either: what is printed and stored is what the file
		// holds. The first failure stops the run (failed).
		if err := s.w.Write(r); err != nil {
			s.fail(err)
			return
		}
	}
	s.mu.Lock()
	s.observeSpan(r)
	s.mu.Unlock()
	r = r.ModelTime(s.scale)
	s.mu.Lock()
	s.agg.Add(r)
	if s.curves != nil {
		s.curves.Add(r)
	}
	if s.observe != nil {
		s.observe(r)
	}
	if s.watch != nil {
		s.watch.Record(r)
	}
	s.n++
	if s.n%settleEvery == 0 && !s.epoch.IsZero() {
		s.settle()
	}
	notify := s.notify
	s.mu.Unlock()
	if notify != nil {
		notify(r)
	}
}

// from tells the aggregator that no measured request of point i is sent
// before ns, on the records' clock (metrics.Aggregator.From).
func (s *sink) from(i int, ns int64) {
	if s.scale > 0 && s.scale != 1 {
		ns = int64(float64(ns) * s.scale) // as Record.ModelTime converts
	}
	s.mu.Lock()
	s.agg.From(i, ns)
	s.mu.Unlock()
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *sink) writeErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.werr
}

// fail keeps the first failure to write a record, and stops the run.
func (s *sink) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.werr != nil {
		return
	}
	// After the writer's first failure it writes nothing more: lines is
	// the count on disk.
	written := s.lines.lines
	if s.gzip {
		written = s.n // of which the last second's may be lost with the stream's end
	}
	s.werr = &RecordsError{Path: s.f.Name(), Err: rundir.Cause(err), Written: written}
	close(s.failed)
}

// RecordsError is a records file that could not be written: the run
// stopped at its first lost record, and Written records are in the file.
type RecordsError struct {
	Path    string
	Err     error
	Written int
}

func (e *RecordsError) Error() string {
	return fmt.Sprintf("%s could not be written: %v; the run stopped at the first record that could not be written, and the %d before it are in the file",
		e.Path, e.Err, e.Written)
}

func (e *RecordsError) Unwrap() error { return e.Err }

// writeRun writes run.json next to the records.
func (s *sink) writeRun(run *record.Run) error {
	if s.out == nil {
		return nil
	}
	return s.out.WriteRun(run)
}

// finish completes run.json and writes summary.json next to the records.
func (s *sink) finish(run *record.Run, sum any) error {
	if s.out == nil {
		return nil
	}
	return s.out.Finish(run, sum)
}

// close flushes the records file to disk and closes it; a failure means
// records may be lost, which the user must hear of.
func (s *sink) close() error {
	if s.out == nil {
		return nil
	}
	return s.out.Close(s.w)
}
