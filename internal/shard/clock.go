package shard

import (
	"fmt"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// Each worker's records count nanoseconds from its own epoch, a monotonic
// reading whose wall-clock time its run.json gives (started). The merged
// run's zero is the start mark (--start-at), or without one the earliest
// worker's epoch; a worker's records move by its epoch's distance from
// that zero. The workers' wall clocks are assumed to agree (NTP keeps a
// cluster's within milliseconds); what is measured is where each worker's
// first point began against the mark, its start offset: a late pod, a
// slow start, or a clock that disagrees all show there, and a spread
// larger than 1% of a point's window is a warning.

// commonEpoch is the merged run's zero.
func commonEpoch(workers []*Worker) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, workers[0].Run.StartAt); err == nil {
		return t
	}
	zero := workers[0].epoch
	for _, w := range workers[1:] {
		if w.epoch.Before(zero) {
			zero = w.epoch
		}
	}
	return zero
}

// shiftRecord moves a record's instants by shift ns. Chunk times count
// from the request's send and stay.
func shiftRecord(r *record.Record, shift int64) {
	r.ScheduledNS += shift
	r.SentNS += shift
	r.EndNS += shift
	if r.FirstTokenNS != 0 {
		r.FirstTokenNS += shift
	}
	if r.FirstOutputNS != 0 {
		r.FirstOutputNS += shift
	}
}

// workerRun is a worker as the merged run lists it: its points' spans
// and starts on the merged clock, and its start offset.
func workerRun(w *Worker, zero time.Time) record.WorkerRun {
	shift := int64(w.epoch.Sub(zero))
	wr := record.WorkerRun{Index: w.Run.Shard.Index, Dir: w.Dir, Started: w.Run.Started, Ended: w.Run.Ended,
		Finished: w.Finished, Interrupted: w.Run.Interrupted, ClientCPUs: w.Run.ClientCPUs}
	for _, pc := range w.Run.Points {
		if !pc.Span.Empty() {
			pc.StartNS += shift
			pc.EndNS += shift
		}
		// Every point of a sharded run records when it began.
		pc.StartedNS += shift
		wr.Points = append(wr.Points, pc)
	}
	if len(wr.Points) > 0 {
		// On the merged clock the mark (or the earliest epoch) is 0.
		wr.StartOffsetMS = float64(wr.Points[0].StartedNS-markNS(w, zero, 0)) / 1e6
	}
	return wr
}

// markNS is where point k's start mark lies on the merged clock: the
// mark's own time when the run had marks, else 0 (the first point of the
// earliest worker).
func markNS(w *Worker, zero time.Time, k int) int64 {
	if k >= len(w.Run.Points) {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, w.Run.Points[k].StartMark)
	if err != nil {
		return 0
	}
	return int64(t.Sub(zero))
}

// Below minSpread, workers' starts are the same instant for any point
// (timer and scheduler jitter); above it, a spread is a warning once it
// passes spreadShare of the point's window.
const (
	minSpread   = 10 * time.Millisecond
	spreadShare = 0.01
)

// startSpread warns of each point whose workers began it further apart
// than 1% of its window (at least minSpread): for that long the server saw
// only part of the load. Idle workers (no part of the point) are left out.
func startSpread(run *record.Run) []string {
	var warn []string
	for _, pc := range run.Points {
		var first, last *record.WorkerRun
		var lo, hi int64
		for i := range run.Workers {
			w := &run.Workers[i]
			for _, wp := range w.Points {
				if wp.Index != pc.Index || wp.Idle {
					continue
				}
				if first == nil || wp.StartedNS < lo {
					first, lo = w, wp.StartedNS
				}
				if last == nil || wp.StartedNS > hi {
					last, hi = w, wp.StartedNS
				}
			}
		}
		spread := time.Duration(hi - lo)
		window := time.Duration(pc.EndNS - pc.StartNS)
		if first == nil || spread <= max(minSpread, time.Duration(spreadShare*float64(window))) {
			continue
		}
		fix := "start the workers together with --start-at"
		if run.StartAt != "" {
			fix = "a worker began after its mark: set --start-at further ahead (pods start slowly), or a larger --start-every"
		}
		warn = append(warn, fmt.Sprintf("%s: worker %d began it %v after worker %d (%.1f%% of its %v window): for that long the server saw part of the load; %s",
			pc.Load.Label(), last.Index, spread.Round(time.Millisecond), first.Index, 100*float64(spread)/float64(max(window, 1)), window.Round(time.Millisecond), fix))
	}
	return warn
}
