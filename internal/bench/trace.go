package bench

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/tokenize"
	"github.com/servebench/servebench/internal/workload"
)

// PlanTrace reads the trace of o through once (workload.ScanTrace) and
// plans its replay: one point (TracePoint), its warm-up the first
// warmupRequests requests and those within warmupDuration of the start.
func PlanTrace(o workload.TraceOptions, maxConcurrency, warmupRequests int, warmupDuration time.Duration) (*Plan, error) {
	t, err := workload.ScanTrace(o)
	if err != nil {
		return nil, err
	}
	p := TracePoint(t, maxConcurrency, warmupRequests)
	p.WarmupDuration = warmupDuration
	return &Plan{Points: []load.Point{p}, Trace: t}, nil
}

// TracePoint is the one load point of a trace replay: an open loop sending
// the window's requests at their replay offsets (workload.Trace.Arrivals),
// at most maxConcurrency in flight (0: no cap), the first warmup of them
// as warm-up. Its nominal rate is the window's mean, for the labels and the
// achieved-load check.
func TracePoint(t *workload.Trace, maxConcurrency, warmup int) load.Point {
	return load.Point{
		Load:     record.Load{Rate: t.Shape.NominalRate(), MaxConcurrency: maxConcurrency},
		Requests: max(t.Shape.Requests-warmup, 1), WarmupRequests: warmup,
		Schedule: &load.Schedule{Arrivals: t.Arrivals, Last: t.Last},
	}
}

// JudgeTrace makes o judge p's trace replay: the trace gives the load and
// the lengths, so o's load becomes the replay's rate, the one level and
// the target unless target (a rate, from the command line) names another,
// and its workload the trace's; o's own load and workload, made for
// synthetic requests, are dropped. A capacity search then scales the
// replay's speed (Judge).
func (p *Plan) JudgeTrace(o *slo.Objective, target float64) {
	pt := p.Points[0].Load
	o.OnTrace(pt.Rate, pt.MaxConcurrency, target)
}

// atLoad is base, a trace's point, replayed at load l: its arrivals'
// offsets scaled so that its rate is l's (a capacity search's probes,
// a target above the trace's rate). A point without a schedule is base.
func atLoad(base load.Point, l record.Load) load.Point {
	if base.Schedule == nil || l.Rate == base.Load.Rate || !(l.Rate > 0) || !(base.Load.Rate > 0) {
		return base
	}
	base.Schedule = wallSchedule(base.Schedule, l.Rate/base.Load.Rate)
	return base
}

// traceConfig makes cfg replay s.Trace: its source, run.json's trace and
// lengths, and a feed deep enough for its bursts. The trace's longest
// request must fit the context: --context-tokens, else the model's as
// the counter knows it.
func traceConfig(cfg Config, s Setup, counter tokenize.Counter, env workload.Env) (Config, error) {
	t := s.Trace
	limit := s.Workload.ContextTokens
	if l, ok := counter.(tokenize.Limiter); ok && limit == 0 {
		limit = l.MaxTokens()
	}
	if err := t.CheckContext(limit); err != nil {
		return cfg, &SetupError{Setting: "Trace", Err: err}
	}
	cfg.NewSource = func(load.Point) workload.Source {
		src, err := t.Source(env)
		if err != nil {
			return failingSource{err}
		}
		return src
	}
	shape := t.Shape
	cfg.Run.Trace = &shape
	cfg.Run.PromptTokens, cfg.Run.OutputTokens = record.TraceLengths, record.TraceLengths
	if m := shape.PromptTokens.Mean; m != nil {
		cfg.PromptTokensMean = *m
	}
	cfg.TracePeakRate = float64(t.PeakRate)
	return cfg, nil
}

// traceAhead is how many requests of a trace point to prepare ahead: two
// seconds of its busiest second, at least what aheadFor gives.
func traceAhead(ahead int, peak, meanPromptTokens float64) int {
	limit := max(16, int(aheadTokens/max(meanPromptTokens, 1)))
	return min(max(ahead, int(2*peak)), limit)
}

// wallSchedule is s for a target running scale times faster: offsets
// divided by it.
func wallSchedule(s *load.Schedule, scale float64) *load.Schedule {
	return &load.Schedule{Last: time.Duration(float64(s.Last) / scale),
		Arrivals: func(yield func(time.Duration, int64) bool) error {
			return s.Arrivals(func(off time.Duration, line int64) bool {
				return yield(time.Duration(math.Round(float64(off)/scale)), line)
			})
		}}
}

// staleTakes: an item a trace's taker passed over (its arrival was
// dropped under the cap, or its goroutine is a little late) is let go
// after this many later takes; goroutines are never that far out of order.
const staleTakes = 256

// stashed is an item passed over, and the take that passed it.
type stashed struct {
	it   workload.Item
	take int64
}

// byLine returns the prepared item of a trace's line. Items come in line
// order, but the requests' goroutines may ask a little out of it, and a
// dropped arrival never asks: items passed over wait in a stash until
// their request asks or staleTakes later takes have gone by.
func (f *feed) byLine(ctx context.Context, line int64) (workload.Item, error) {
	f.lineMu.Lock()
	defer f.lineMu.Unlock()
	f.takes++
	if s, ok := f.stash[line]; ok {
		delete(f.stash, line)
		return s.it, nil
	}
	for {
		it, ok := f.next(ctx)
		if !ok {
			return it, errors.New(f.reason())
		}
		if it.TraceLine == line {
			f.prune()
			return it, nil
		}
		if f.stash == nil {
			f.stash = map[int64]stashed{}
		}
		f.stash[it.TraceLine] = stashed{it, f.takes}
	}
}

func (f *feed) prune() {
	for l, s := range f.stash {
		if f.takes-s.take > staleTakes {
			delete(f.stash, l)
		}
	}
}
