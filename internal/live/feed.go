package live

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
)

// recordQueue is how many records may wait for the live figures: about a
// second of a fast run's records. A full queue drops its oldest (counted
// in Counts.Dropped) rather than hold up the run that hands them over.
const recordQueue = 8192

// feed is what the run hands the view (bench.Watcher) and the figures
// made of it. The run's calls return at once: records go through a queue
// that drops, and everything else is a short lock or an atomic.
type feed struct {
	recs     chan *record.Record
	inflight atomic.Int64
	dropped  atomic.Int64
	clock    func() time.Time

	mu      sync.Mutex // the figures below; never held by the run's calls but Begin/Point/End
	start   time.Time  // the command's start, for elapsed
	status  string
	epoch   time.Time
	run     *RunInfo
	planned int
	point   *PointInfo
	pointT0 time.Time
	done    int // records this session, warm-up included
	atPoint int // records of the point running
	failed  int
	errs    map[string]int
	agg     *metrics.Aggregator
	views   map[int]PointView
	dirty   map[int]bool
	ended   int // points ended this session
	tokens  int // output tokens of the records since the last tick
	series  []Tick
	events  []Event
	verdict []VerdictView
	final   *FinalVerdict
	warns   []string
	report  string // the report's path on the server (State.Report)
	// reportPath is the report's file
	reportPath string
	seenErr    map[string]bool // error classes announced this session
	// since the last push: what a delta carries
	newTicks, newEvents, newVerdicts int
	changed                          map[int]bool // points
	// fresh: a session began; every stream gets the whole state next
	fresh    bool
	lastTick time.Time

	tmu sync.Mutex // telemetry, written under the sampler's lock
	tel telemetryView
	// telemetry events wait here for the next tick (tmu)
	telEvents []Event
}

func newFeed(clock func() time.Time) *feed {
	f := &feed{recs: make(chan *record.Record, recordQueue), clock: clock, status: StatusWaiting, changed: map[int]bool{}}
	f.start = clock()
	f.reset()
	return f
}

// reset empties a session's figures; events and verdicts stay (decide
// measures several sessions, and the page tells them apart by run).
func (f *feed) reset() {
	f.agg = &metrics.Aggregator{Ordered: true}
	f.views, f.dirty, f.errs, f.seenErr = map[int]PointView{}, map[int]bool{}, map[string]int{}, map[string]bool{}
	f.point, f.done, f.atPoint, f.failed, f.ended, f.tokens = nil, 0, 0, 0, 0, 0
	f.series, f.final, f.warns = nil, nil, nil
	f.inflight.Store(0)
}

// Begin starts a session's figures afresh (bench.Watcher).
func (f *feed) Begin(run *record.Run, epoch time.Time, planned int) {
	f.drain()
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 1
	if f.run != nil {
		n = f.run.Number + 1
	}
	f.reset()
	f.fresh = true
	f.status, f.epoch, f.planned, f.lastTick = StatusRunning, epoch, planned, f.clock()
	f.run = &RunInfo{Number: n, URL: run.Target.URL, API: run.Target.API, Model: run.Target.Model,
		Simulated: run.Target.Simulated, TimeScale: run.TimeScale, PromptTokens: run.PromptTokens,
		OutputTokens: run.OutputTokens, Seed: run.Seed, Started: run.Started}
	f.event(EventRun, fmt.Sprintf("run %d: %s %s at %s", n, run.Target.API, run.Target.Model, run.Target.URL))
}

// Event kinds of the live view, beside telemetry's (telemetry.Event*).
const (
	EventRun     = "run"
	EventPoint   = "point"
	EventError   = "error"
	EventWarning = "warning"
	EventVerdict = "verdict"
)

// event appends an event; under mu.
func (f *feed) event(kind, text string) {
	f.events = append(f.events, Event{TS: f.elapsed(), Kind: kind, Text: text})
	f.newEvents++
	if len(f.events) > maxEvents {
		f.events = f.events[len(f.events)-maxEvents:]
	}
}

func (f *feed) elapsed() float64 { return seconds(f.clock().Sub(f.start)) }

// Point notes the point that starts now (bench.Watcher).
func (f *feed) Point(p load.Point) {
	f.drain()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.point = &PointInfo{Index: p.Index, Load: p.Load, Label: p.Load.Label(), Requests: p.Requests,
		WarmupRequests: p.WarmupRequests, DurationS: seconds(p.Duration), WarmupS: seconds(p.WarmupDuration), Running: true}
	f.pointT0, f.atPoint = f.clock(), 0
	f.event(EventPoint, fmt.Sprintf("point %d (%s) started", p.Index+1, p.Load.Label()))
}

// Sent counts a request in flight (bench.Watcher).
func (f *feed) Sent() { f.inflight.Add(1) }

// Record takes a written record (bench.Watcher): never waits. When the
// queue is full the oldest record waiting is dropped.
func (f *feed) Record(r *record.Record) {
	f.inflight.Add(-1)
	for {
		select {
		case f.recs <- r:
			return
		default:
		}
		select {
		case <-f.recs:
			f.dropped.Add(1)
		default:
		}
	}
}

// collect folds records into the figures as they come, a batch a lock,
// until quit closes.
func (f *feed) collect(quit <-chan struct{}) {
	for {
		select {
		case r := <-f.recs:
			f.mu.Lock()
			f.add(r)
			f.addWaiting(collectBatch)
			f.mu.Unlock()
		case <-quit:
			return
		}
	}
}

// collectBatch bounds the records folded in under one lock, so that a
// push is not kept waiting behind a long queue.
const collectBatch = 256

// addWaiting folds in up to n records already waiting; under mu.
func (f *feed) addWaiting(n int) {
	for range n {
		select {
		case r := <-f.recs:
			f.add(r)
		default:
			return
		}
	}
}

// drain folds in every record waiting: before a point or a session
// begins or ends, so that its figures hold its records.
func (f *feed) drain() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addWaiting(recordQueue)
}

// add folds one record in; under mu.
func (f *feed) add(r *record.Record) {
	f.agg.Add(r)
	f.dirty[r.Point] = true
	f.done++
	if f.point != nil && r.Point == f.point.Index {
		f.atPoint++
	}
	if r.Error != nil {
		f.failed++
		f.errs[r.Error.Class]++
		if !f.seenErr[r.Error.Class] {
			f.seenErr[r.Error.Class] = true
			f.event(EventError, fmt.Sprintf("first %s error: %s", r.Error.Class, r.Error.Message))
		}
		return
	}
	f.tokens += r.OutputTokens
}

// Sample keeps a telemetry reading (bench.Watcher), under the sampler's
// lock: a copy under a lock of its own.
func (f *feed) Sample(s *telemetry.Sample) {
	f.tmu.Lock()
	defer f.tmu.Unlock()
	if s.Event != nil {
		text := s.Event.Kind + ": " + s.Event.Source
		if s.Event.Detail != "" {
			text += ": " + s.Event.Detail
		}
		f.telEvents = append(f.telEvents, Event{Kind: s.Event.Kind, Text: text})
		return
	}
	f.tel.add(s)
}

// PointDone notes a point's end and its warnings (bench.Watcher).
func (f *feed) PointDone(p metrics.PointSummary) {
	f.drain()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.views[p.Index] = pointView(&p, true)
	f.changed[p.Index] = true
	delete(f.dirty, p.Index)
	f.ended++
	if f.point != nil && f.point.Index == p.Index {
		f.point.Running = false
	}
	f.event(EventPoint, fmt.Sprintf("point %d (%s) done: %d completed, %d failed", p.Index+1, p.Load.Label(), p.Requests.Completed, p.Requests.Failed))
	for _, w := range p.Warnings {
		f.event(EventWarning, fmt.Sprintf("point %d: %s", p.Index+1, w))
	}
}

// Verdict notes a load's verdict (bench.Watcher).
func (f *feed) Verdict(v slo.PointVerdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	run := 0
	if f.run != nil {
		run = f.run.Number
	}
	f.verdict = append(f.verdict, verdictView(run, v))
	f.newVerdicts++
	word := "passes"
	if !v.Pass {
		word = "fails"
	}
	text := v.Load.Label() + " " + word
	if len(v.Shortfalls) > 0 {
		text += ": " + strings.Join(v.Shortfalls, "; ")
	}
	f.event(EventVerdict, text)
}

// End makes the session's figures summary.json's (bench.Watcher).
func (f *feed) End(sum *metrics.Summary, v *slo.Verdict) {
	f.drain()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.views, f.dirty = map[int]PointView{}, map[int]bool{}
	for i := range sum.Points {
		f.views[sum.Points[i].Index] = pointView(&sum.Points[i], true)
		f.changed[sum.Points[i].Index] = true
	}
	f.warns = sum.Warnings
	for _, w := range sum.Warnings {
		f.event(EventWarning, w)
	}
	if v != nil {
		f.final = &FinalVerdict{Conclusion: v.Conclusion, Holds: v.Holds, Text: v.Text}
		f.event(EventVerdict, v.Text)
	}
	if f.point != nil {
		f.point.Running = false
	}
	f.status = StatusMeasured
	f.inflight.Store(0)
	f.event(EventRun, "measurement done")
}

// tick closes one second of the series and brings the figures of the
// points that changed up to date; under mu.
func (f *feed) tick() {
	now := f.clock()
	f.tmu.Lock()
	_, tk := f.tel.view()
	evs := f.telEvents
	f.telEvents = nil
	f.tmu.Unlock()
	for _, e := range evs {
		f.event(e.Kind, e.Text)
	}
	for i := range f.dirty {
		if p, ok := f.agg.Point(i); ok {
			f.views[i] = pointView(&p, false)
			f.changed[i] = true
		}
	}
	clear(f.dirty)
	if f.status != StatusRunning {
		return
	}
	dt := seconds(now.Sub(f.lastTick))
	tk.TS, tk.InFlight, tk.Done = seconds(now.Sub(f.epoch)), int(max(f.inflight.Load(), 0)), f.done
	if dt > 0 {
		tk.OutputTPS = float64(f.tokens) / dt
	}
	f.tokens, f.lastTick = 0, now
	f.series = append(f.series, tk)
	f.newTicks++
	if len(f.series) > maxSeries {
		f.series = f.series[len(f.series)-maxSeries:]
	}
}

// state is the state now: whole, or the delta since the last push
// (sent forgets what that carried); under mu.
func (f *feed) state(full bool) State {
	s := State{Schema: Schema, Full: full, Status: f.status, ElapsedS: f.elapsed(), Run: f.run,
		Requests: Counts{Done: f.done, Failed: f.failed, Errors: maps.Clone(f.errs), Dropped: int(f.dropped.Load())},
		Verdict:  f.final, Warnings: f.warns, Report: f.report}
	if f.status == StatusRunning {
		s.Requests.InFlight = int(max(f.inflight.Load(), 0))
	}
	f.tmu.Lock()
	s.Telemetry, _ = f.tel.view()
	f.tmu.Unlock()
	if f.point != nil {
		p := *f.point
		p.ElapsedS, p.Done = seconds(f.clock().Sub(f.pointT0)), f.atPoint
		if p.Running {
			remaining(&p)
		}
		s.Point = &p
	}
	s.Progress = f.progress()
	for _, i := range slices.Sorted(maps.Keys(f.views)) {
		if full || f.changed[i] {
			s.Points = append(s.Points, f.views[i])
		}
	}
	s.Series, s.Events, s.Verdicts = f.series, f.events, f.verdict
	if !full {
		s.Series = tail(f.series, f.newTicks)
		s.Events = tail(f.events, f.newEvents)
		s.Verdicts = tail(f.verdict, f.newVerdicts)
	}
	return s
}

// sent forgets what the last push carried; under mu.
func (f *feed) sent() {
	f.newTicks, f.newEvents, f.newVerdicts = 0, 0, 0
	clear(f.changed)
}

func tail[T any](xs []T, n int) []T { return xs[max(len(xs)-n, 0):] }

// remaining fills what is left of a running point: requests when a count
// bounds it, else time.
func remaining(p *PointInfo) {
	if p.DurationS > 0 {
		r := max(p.DurationS+p.WarmupS-p.ElapsedS, 0)
		p.RemainingS = &r
		return
	}
	if p.Requests > 0 {
		r := max(p.Requests+p.WarmupRequests-p.Done, 0)
		p.Remaining = &r
	}
}

// progress is the session's share done: points ended, plus the running
// point's share of its requests or time.
func (f *feed) progress() Progress {
	pr := Progress{PointsDone: f.ended, PointsPlanned: max(f.planned, 0)}
	if f.status == StatusMeasured || f.status == StatusEnded {
		pr.Fraction = 1
		return pr
	}
	if f.planned == 0 {
		return pr
	}
	share := 0.0
	if p := f.point; p != nil && p.Running {
		el := seconds(f.clock().Sub(f.pointT0))
		switch {
		case p.DurationS > 0:
			share = el / (p.DurationS + p.WarmupS)
		case p.Requests > 0:
			share = float64(f.atPoint) / float64(p.Requests+p.WarmupRequests)
		}
	}
	pr.Fraction = min((float64(f.ended)+min(share, 1))/float64(max(f.planned, f.ended+1)), 1)
	return pr
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), cmp.Compare[string])
}
