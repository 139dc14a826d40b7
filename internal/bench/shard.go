package bench

import (
	"context"
	"errors"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
)

// ErrStartEvery: several load points must start at marks, and nothing
// says how far apart: a request count bounds a point, so how long it takes
// is not known ahead.
var ErrStartEvery = errors.New("several load points bounded by request counts (or warm-up requests) need the time between their start marks")

// StartEvery is the time between the start marks of consecutive points:
// the one asked for, or, when every point is bounded by a duration, the
// longest point's warm-up and measured time plus the grace period its
// requests in flight may take to finish (in wall time: a sped-up target's
// durations are shorter). Workers whose points overrun start the next one
// late; run.json shows it (started_ns against start_mark) and the merged
// report names them.
func StartEvery(s Setup, scale float64) (time.Duration, error) {
	if s.StartAt.IsZero() || len(s.Points) < 2 || s.StartEvery > 0 {
		return s.StartEvery, nil
	}
	longest := time.Duration(0)
	for _, p := range s.Points {
		if p.Duration <= 0 || p.WarmupRequests > 0 {
			return 0, &SetupError{Setting: "StartEvery", Err: ErrStartEvery}
		}
		longest = max(longest, wallTime(p.WarmupDuration+p.Duration, scale))
	}
	grace := s.Grace
	if grace <= 0 {
		grace = load.DefaultGrace
	}
	// Whole seconds keep the marks readable in run.json and logs.
	return (longest + grace).Round(time.Second) + time.Second, nil
}

// waitMark waits for the start mark of the session's next point and
// returns it as run.json records it; "" when the run has no marks. A mark
// already passed (a worker that started late) does not wait: the point's
// started_ns shows how late it began.
func (s *Session) waitMark(ctx context.Context) string {
	if s.cfg.StartAt.IsZero() {
		return ""
	}
	mark := s.cfg.StartAt.Add(time.Duration(len(s.run.Points)) * s.cfg.StartEvery)
	// mark carries no monotonic reading: time.Until compares wall clocks,
	// the clocks the workers agree on.
	if d := time.Until(mark); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return mark.UTC().Format(time.RFC3339Nano)
}

// shardSeed is the seed a shard draws its lengths and prompts from: the
// run's for worker 0 (and an unsharded run), another for each other
// worker, so that workers never send the same prompt at the same moment (a
// server's prefix cache would serve the copies). The arrival schedule is
// not drawn from it: every shard takes its arrivals from the run's one
// schedule.
func shardSeed(seed uint64, sh load.Shard) uint64 {
	return seed + uint64(sh.Index)*0x9e3779b97f4a7c15
}

// runShard is the shard as run.json records it, nil for the whole load.
func runShard(sh load.Shard) *record.RunShard {
	if sh.Whole() {
		return nil
	}
	return &record.RunShard{Index: sh.Index, Count: sh.Count}
}

// startAtRecord is the start mark as run.json records it.
func startAtRecord(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
