// Package bench runs a benchmark: it wires a workload source, the load
// runner, a backend client, the records file and the metrics aggregator
// together for a list of load points, and writes what it measured as it
// goes. It owns the run directory's layout (docs/OUTPUT.md).
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
	"github.com/servebench/servebench/internal/workload"
)

// CompressGzip is Config.Compress for gzip-compressed records.
const CompressGzip = "gzip"

// Config is one benchmark run.
type Config struct {
	Client *backend.Client
	// NewSource yields a point's request contents; a new one per point
	// keeps each point's lengths reproducible from the seed, and a point
	// of a workload matrix gets its cell's (p.Load.Workload).
	NewSource func(p load.Point) workload.Source
	Run       record.Run // filled in further as the run goes
	Points    []load.Point
	// OutDir receives records.jsonl, run.json and summary.json; empty
	// keeps everything in memory.
	OutDir string
	// Compress is CompressGzip to write records.jsonl.gz instead of
	// records.jsonl, or empty.
	Compress string
	Grace    time.Duration
	// Progress, when set, receives live progress lines (a terminal).
	Progress io.Writer
	// ProgressLines: Progress is a log, not a terminal; it gets a line
	// of its own every 10 s instead of a line redrawn in place.
	ProgressLines bool
	// PromptTokensMean sizes how many requests are prepared before a
	// point starts (aheadFor), so that prompt synthesis does not delay
	// sends.
	PromptTokensMean float64
	// TracePeakRate is a replayed trace's most requests in a second: the
	// feed prepares two seconds of it ahead.
	TracePeakRate float64
	// SizedByServer: prompts are sized with the server's /tokenize, so a
	// point bounded by a request count prepares them all before it starts.
	SizedByServer bool
	// SimClockLost reads the built-in simulator's skipped time (Setup).
	SimClockLost func() time.Duration
	// Observe, when set, receives every record after it is written and
	// aggregated (an objective's evaluator); calls are serialised.
	Observe func(*record.Record)
	// Decorate, when set, returns what summary.json holds in place of the
	// summary (an objective's verdict adds its fields to it).
	Decorate func(*metrics.Summary) any
	// Telemetry, when set, is sampled from the session's start to its
	// end into telemetry.jsonl and the points' telemetry.
	Telemetry *Telemetry
	// Shard is the worker this run is of a sharded run; the zero value
	// runs the whole load.
	Shard load.Shard
	// StartAt, when set, is the wall-clock mark of the first point; point
	// k waits for StartAt + k×StartEvery (shard.go).
	StartAt    time.Time
	StartEvery time.Duration
	// Watch, when set, sees the run as it goes (the live view); it never
	// holds the run up.
	Watch Watcher
}

// Result is what a run produced, also when it was interrupted.
type Result struct {
	Summary *metrics.Summary
	// Curves are the records' distributions and timeline for the HTML
	// report, gathered as the records were written (nil without a run
	// directory): the page is built without reading the records back.
	Curves      *metrics.Curves
	Records     int
	Interrupted bool
}

// Run runs every point in order. It stops early when ctx is cancelled and
// still returns the summary of everything that completed; records already
// written stay written whatever happens.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	sess, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	var runErr error
	for _, p := range cfg.Points {
		if ctx.Err() != nil {
			break
		}
		if _, err := sess.RunPoint(ctx, p); err != nil {
			runErr = err
			break
		}
	}
	res, err := sess.Close(ctx)
	if runErr == nil {
		runErr = err
	}
	return res, runErr
}

// Session is a run in progress: points can be added one at a time (a
// capacity search decides the next load from the last result), and all of
// them share one epoch, one records file and one summary.
type Session struct {
	cfg    Config
	sink   *sink
	run    record.Run
	runner *load.Runner
	tel    *sampling
	closed bool
}

// Open starts a session: it creates the run directory's records file and
// writes run.json at once, so that a run killed before its end still has
// its header.
func Open(cfg Config) (*Session, error) {
	sink, err := newSink(cfg.OutDir, cfg.Compress)
	if err != nil {
		return nil, err
	}
	sink.observe, sink.watch = cfg.Observe, cfg.Watch
	if cfg.OutDir != "" {
		sink.curves = &metrics.Curves{}
	}
	sink.scale = cfg.Run.Scale()
	sink.agg.Slice = cfg.Run.Slice()
	sink.agg.Ordered = true // records are handed over as their requests end
	epoch := time.Now()
	run := cfg.Run
	run.Schema = record.RunSchema
	run.ClientCPUs = runtime.GOMAXPROCS(0)
	run.Started = epoch.UTC().Format(time.RFC3339Nano)
	if err := sink.writeRun(&run); err != nil {
		sink.remove()
		return nil, err
	}
	runner := &load.Runner{Epoch: epoch, Grace: cfg.Grace, Emit: sink.emit, Halt: sink.failed}
	sink.epoch = epoch
	if cfg.Watch != nil {
		cfg.Watch.Begin(&run, epoch, len(cfg.Points))
	}
	tel, err := startSampling(cfg.Telemetry, cfg.OutDir, runner, cfg.Watch)
	if err != nil {
		sink.removeRun()
		return nil, err
	}
	return &Session{cfg: cfg, sink: sink, run: run, tel: tel, runner: runner}, nil
}

// RunPoint runs one load point and returns its summary. Point indexes must
// be unique within a session. run.json is rewritten after each point, so
// that a killed run keeps the client figures of the points it finished.
func (s *Session) RunPoint(ctx context.Context, p load.Point) (metrics.PointSummary, error) {
	pc := record.PointClient{Index: p.Index, Load: p.Load}
	// Prepared requests first, then the mark: every worker sends its
	// first request at the mark, however long its preparation took.
	var lost0 time.Duration
	ready := func() {
		pc.StartMark = s.waitMark(ctx)
		if s.cfg.SimClockLost != nil {
			lost0 = s.cfg.SimClockLost()
		}
		pc.StartedNS = int64(time.Since(s.runner.Epoch))
		// No measured request is sent before the point starts, nor before
		// its warm-up time has passed: slicing can count them as they come.
		s.sink.from(p.Index, pc.StartedNS+int64(wallPoint(p, s.cfg.Run.Scale()).WarmupDuration))
		if s.cfg.Watch != nil {
			s.cfg.Watch.Point(wallPoint(p, s.cfg.Run.Scale()))
		}
	}
	var err error
	pc.Client, pc.Idle, err = runPoint(ctx, s.cfg, s.runner, s.sink, p, ready)
	pc.Span = s.sink.span(p.Index)
	if s.cfg.SimClockLost != nil {
		// model time, as the telemetry's sim_clock_lost_ms
		ms := float64(s.cfg.SimClockLost()-lost0) / 1e6 * s.cfg.Run.Scale()
		pc.SimClockLostMS = &ms
	}
	s.run.Points = append(s.run.Points, pc)
	if werr := s.sink.writeErr(); werr != nil {
		// the records file failed: that is why the point stopped
		err = werr
	} else if werr := s.sink.writeRun(&s.run); err == nil {
		err = werr
	}
	s.sink.mu.Lock()
	sum, _ := s.sink.agg.Point(p.Index)
	s.sink.mu.Unlock()
	if s.cfg.Watch != nil {
		s.cfg.Watch.PointDone(sum)
	}
	return sum, err
}

// Supersede marks points as measured again (run.json
// points[].superseded) and rewrites run.json.
func (s *Session) Supersede(points []int) error {
	for i := range s.run.Points {
		if slices.Contains(points, s.run.Points[i].Index) {
			s.run.Points[i].Superseded = true
		}
	}
	return s.sink.writeRun(&s.run)
}

// Summary returns the summary of everything run so far.
func (s *Session) Summary(ctx context.Context) *metrics.Summary {
	run := s.run
	run.Interrupted = ctx.Err() != nil
	s.sink.mu.Lock()
	sum := metrics.Summarize(&run, &s.sink.agg)
	events := slices.Clone(s.sink.events)
	s.sink.mu.Unlock()
	if err := sum.AddTelemetry(telemetry.InTimeOrder(s.tel.scan, events)); err != nil {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("telemetry: %v: its figures cover the samples read before that", err))
	}
	return sum
}

// Close closes the records file (flushed to disk), then completes run.json
// and writes summary.json. The first error met is returned with the
// result, which is complete whatever the files' fate.
func (s *Session) Close(ctx context.Context) (*Result, error) {
	if s.closed {
		return nil, errors.New("bench: session already closed")
	}
	s.closed = true
	err := s.sink.writeErr() // first: the records are the product
	if terr := s.tel.stop(); err == nil {
		err = terr
	}
	if cerr := s.sink.close(); err == nil {
		err = cerr
	}
	if re, ok := errors.AsType[*RecordsError](err); ok {
		s.run.Stopped = fmt.Sprintf("%s could not be written (%v): the load stopped at the first record lost; the %d records before it are in the file",
			rundir.RecordsFile, re.Err, re.Written)
	}
	s.run.Interrupted = ctx.Err() != nil
	s.run.Ended = time.Now().UTC().Format(time.RFC3339Nano)
	sum := s.Summary(ctx)
	res := &Result{Summary: sum, Curves: s.sink.curves, Records: s.sink.count(), Interrupted: s.run.Interrupted}
	var out any = sum
	if s.cfg.Decorate != nil {
		out = s.cfg.Decorate(sum)
	}
	if ferr := s.sink.finish(&s.run, out); err == nil {
		err = ferr
	}
	if s.cfg.Watch != nil {
		var v *slo.Verdict
		if rep, ok := out.(*slo.Report); ok {
			v = rep.Verdict
		}
		s.cfg.Watch.End(sum, v)
	}
	return res, err
}

// runPoint prepares the requests of the run's shard of a point ahead,
// calls ready, then runs it; idle is true when the shard has no part of
// the point.
func runPoint(ctx context.Context, cfg Config, runner *load.Runner, sink *sink, whole load.Point, ready func()) (c record.ClientStats, idle bool, err error) {
	sink.nominal(whole)
	p, ok := cfg.Shard.Part(whole)
	if !ok {
		ready()
		return record.ClientStats{}, true, nil
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ahead := aheadFor(cfg.PromptTokensMean, p, cfg.SizedByServer)
	if p.Schedule != nil {
		ahead = traceAhead(ahead, cfg.TracePeakRate, cfg.PromptTokensMean)
	}
	src := cfg.NewSource(p)
	feed, err := prepare(pctx, src, ahead, total(p))
	if err != nil {
		return record.ClientStats{}, false, fmt.Errorf("load point %d: preparing requests: %w", p.Index, err)
	}
	feed.sessions, _ = src.(workload.Sessions)
	feed.closed = p.Load.Concurrency > 0
	ready()
	prog := newProgress(cfg.Progress, p, runner.Epoch, cfg.ProgressLines)
	sink.onEmit(prog.add)
	defer prog.stop()
	runner.Send = func(ctx context.Context, rec *record.Record) {
		sink.send(rec)
		send(ctx, &cfg, runner.Epoch, feed, rec)
	}
	c, err = runner.Run(ctx, wallPoint(p, cfg.Run.Scale()))
	if ce, ok := errors.AsType[*load.ConnectError](err); ok {
		return c, false, fmt.Errorf("load point %d: cannot reach %s: %w; %d requests sent, each recorded. Is the server running at that address?",
			p.Index, cfg.Run.Target.URL, ce, c.Sent)
	}
	if err == nil {
		err = feed.err()
	}
	return c, false, err
}

// wallPoint is p as the client must run it against a target running scale
// times faster than model time: rates multiplied, durations divided, so
// that in model time the point is the one asked for.
func wallPoint(p load.Point, scale float64) load.Point {
	if scale == 1 {
		return p
	}
	p.Load = p.Load.WallLoad(scale)
	if p.Schedule != nil {
		p.Schedule = wallSchedule(p.Schedule, scale)
	}
	p.Duration = time.Duration(float64(p.Duration) / scale)
	p.WarmupDuration = time.Duration(float64(p.WarmupDuration) / scale)
	return p
}

// total is how many requests a point will send at most, or 0 when only a
// duration bounds it.
func total(p load.Point) int {
	if p.Requests > 0 && p.WarmupDuration == 0 {
		return p.Requests + p.WarmupRequests
	}
	return 0
}

// send takes the next prepared request and performs it. Waiting for the
// feed happens after the scheduled time, so a slow feed shows as queue time.
// cfg is a pointer: the Config by value would put half a kilobyte on the
// stack of every stream's goroutine.
func send(ctx context.Context, cfg *Config, epoch time.Time, feed *feed, rec *record.Record) {
	rec.API, rec.Model = cfg.Run.Target.API, cfg.Run.Target.Model
	it, err := feed.take(ctx, epoch, rec)
	if err != nil {
		// Nothing was sent: the record says why, at the moment it gave up.
		rec.SentNS = int64(time.Since(epoch))
		rec.EndNS = rec.SentNS
		class := record.ClassClient
		if ctx.Err() != nil {
			class = record.ClassCancelled
		}
		rec.Error = &record.Error{Class: class, Message: "no request could be prepared: " + err.Error()}
		return
	}
	rec.PromptTokensRequested, rec.OutputTokensRequested = it.Want, it.MaxTokens
	rec.Session, rec.Turn = it.Session, it.Turn
	req := &backend.Request{Prompt: it.Prompt, Messages: messages(it.Messages), MaxTokens: it.MaxTokens, PromptTokens: it.Want}
	tokens, source := it.Tokens, it.Source
	var turn *workload.Item // kept only for a session: a prompt is not held while its answer streams
	var reply strings.Builder
	if feed.sessions != nil {
		t := it
		turn, req.Reply = &t, &reply
	}
	cfg.Client.Do(ctx, epoch, req, rec)
	if rec.PromptTokens == 0 && tokens > 0 {
		rec.PromptTokens, rec.PromptTokensSource = tokens, source
	}
	if turn != nil {
		feed.sessions.Done(ctx, *turn, reply.String(), rec.OK())
	}
}
