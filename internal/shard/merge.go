package shard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// Options of a merge.
type Options struct {
	// Partial merges even when workers are missing or did not finish;
	// the summary's first warning names them. Without it such a merge is
	// an *IncompleteError.
	Partial bool
	// Strict refuses a records file with a damaged line instead of
	// skipping the line with a warning.
	Strict bool
	// Slice cuts each point into slices of this much model time when
	// SliceSet; otherwise the run's own --slice applies.
	Slice    time.Duration
	SliceSet bool
	// Observe, when set, sees every record on the merged clock, in model
	// time (an objective's evaluator).
	Observe func(*record.Record)
	// Records, when set, receives every record on the merged clock as
	// measured (not model time), for a merged records.jsonl.
	Records func(*record.Record) error
}

// IncompleteError: the directories given are not all of a run's workers,
// or some did not finish. Its message names each one.
type IncompleteError struct {
	Count   int
	Missing []int    // worker indexes with no directory
	Failed  []string // "worker 2 (runs/w2): why"
}

func (e *IncompleteError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		ids := make([]string, len(e.Missing))
		for i, m := range e.Missing {
			ids[i] = strconv.Itoa(m)
		}
		parts = append(parts, fmt.Sprintf("worker %s of %d missing (no directory given)", strings.Join(ids, ", "), e.Count))
	}
	parts = append(parts, e.Failed...)
	return strings.Join(parts, "; ")
}

// Merge merges the workers of one sharded run into one run and summarises
// it. The merged run's records are the workers' records on one clock
// (clock.go); the returned summary's run lists the workers (run.workers).
func Merge(workers []*Worker, opt Options) (*metrics.Summary, error) {
	if err := check(workers); err != nil {
		return nil, err
	}
	slices.SortFunc(workers, func(a, b *Worker) int { return cmp.Compare(a.Run.Shard.Index, b.Run.Shard.Index) })
	ref := workers[0].Run
	zero := commonEpoch(workers)
	run := mergedRun(workers, zero)
	if inc := incomplete(run); inc != nil && !opt.Partial {
		return nil, inc
	}
	// The workers' records come one worker after the other: the requests
	// in flight are swept from a second reading merged by end (sweep.go).
	agg := metrics.Aggregator{Slice: ref.Slice(), Ordered: true, SweepApart: true}
	if opt.SliceSet {
		agg.Slice = opt.Slice
	}
	agg.FromRun(run)
	var warn []string
	// Ids restart at 0 in every worker: the merged run numbers its
	// records afresh, worker by worker, so that each id is one request.
	var id int64
	var werr error
	for i, w := range workers {
		shift := int64(w.epoch.Sub(zero))
		warn = append(warn, w.warnings...)
		read, err := w.records(opt.Strict, func(r *record.Record) {
			shiftRecord(r, shift)
			r.ID, id = id, id+1
			if opt.Records != nil && werr == nil {
				werr = opt.Records(r)
			}
			m := r.ModelTime(ref.Scale())
			agg.Add(m)
			if opt.Observe != nil {
				opt.Observe(m)
			}
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			return nil, err
		}
		run.Workers[i].Records = read.Records
		if damaged := len(read.Damaged); damaged > 0 {
			warn = append(warn, fmt.Sprintf("%s: %d damaged line(s) of %s skipped, not counted", w.Name(), damaged, rundir.RecordsFile))
		}
		if dups := read.Duplicates; len(dups) > 0 {
			warn = append(warn, fmt.Sprintf("%s: %d duplicated record(s) of %s dropped, counted once (first: %s)", w.Name(), len(dups), rundir.RecordsFile, dups[0]))
		}
	}
	if agg.Sweeping() {
		if err := sweepByEnd(workers, zero, ref.Scale(), &agg, opt.Strict); err != nil {
			return nil, err
		}
	}
	sum := metrics.Summarize(run, &agg)
	sum.Warnings = append(append(Warnings(run), warn...), sum.Warnings...)
	return sum, nil
}

// check refuses directories that are not the workers of one run, or the
// same worker twice.
func check(workers []*Worker) error {
	if len(workers) == 0 {
		return fmt.Errorf("no worker directories to merge")
	}
	seen := map[int]*Worker{}
	for _, w := range workers {
		if d := sameRun(workers[0].Run, w.Run); d != "" {
			return fmt.Errorf("%s is not a worker of the same run as %s: %s", w.Dir, workers[0].Dir, d)
		}
		if o := seen[w.Run.Shard.Index]; o != nil {
			return fmt.Errorf("%s and %s are both worker %d of %d", o.Dir, w.Dir, w.Run.Shard.Index, w.Run.Shard.Count)
		}
		seen[w.Run.Shard.Index] = w
	}
	return nil
}

// incomplete names the workers of a merged run that are absent or did not
// finish; nil when all finished.
func incomplete(run *record.Run) *IncompleteError {
	e := &IncompleteError{Count: run.WorkerCount}
	have := map[int]bool{}
	for _, w := range run.Workers {
		have[w.Index] = true
		name := fmt.Sprintf("worker %d (%s)", w.Index, w.Dir)
		switch {
		case w.Interrupted:
			e.Failed = append(e.Failed, name+" was interrupted: its last point is short of its share")
		case !w.Finished:
			e.Failed = append(e.Failed, name+" did not finish (no summary.json: killed, or its pod failed): its points are short of its share")
		}
	}
	for i := range e.Count {
		if !have[i] {
			e.Missing = append(e.Missing, i)
		}
	}
	if len(e.Missing) == 0 && len(e.Failed) == 0 {
		return nil
	}
	return e
}

// Warnings are what a merged run's workers say about its figures: the
// workers missing or unfinished (first: every figure falls short by their
// share), and the points whose workers began them apart. They are derived
// from the merged run.json alone, so that report of a merged directory
// (report --out) says them again.
func Warnings(run *record.Run) []string {
	var warn []string
	if inc := incomplete(run); inc != nil {
		warn = append(warn, "partial merge: "+inc.Error()+": the figures cover only the load the others sent")
	}
	return append(warn, startSpread(run)...)
}

// mergedRun is the run the workers make together: the first worker's
// header without its shard, started at the common zero, the client
// figures of each point added up over the workers, and the workers listed.
func mergedRun(workers []*Worker, zero time.Time) *record.Run {
	run := *workers[0].Run
	run.Shard, run.Points, run.Workers = nil, nil, nil
	run.WorkerCount = workers[0].Run.Shard.Count
	run.Started = zero.UTC().Format(time.RFC3339Nano)
	run.Ended = ""
	byIndex := map[int]*record.PointClient{}
	var order []int
	for _, w := range workers {
		run.Interrupted = run.Interrupted || w.Run.Interrupted
		run.Ended = max(run.Ended, w.Run.Ended)
		run.ClientCPUs = minCPUs(run.ClientCPUs, w.Run.ClientCPUs)
		wr := workerRun(w, zero)
		for _, pc := range wr.Points {
			m := byIndex[pc.Index]
			if m == nil {
				m = &record.PointClient{Index: pc.Index, Load: pc.Load}
				byIndex[pc.Index] = m
				order = append(order, pc.Index)
			}
			addClient(m, pc)
		}
		run.Workers = append(run.Workers, wr)
	}
	if run.Interrupted || len(workers) < workers[0].Run.Shard.Count {
		run.Ended = ""
	}
	for _, i := range order {
		run.Points = append(run.Points, *byIndex[i])
	}
	return &run
}

// minCPUs is the smaller known CPU count: a point's CPU figure is judged
// against the smallest machine among the workers.
func minCPUs(a, b int) int {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// addClient adds one worker's figures of a point to the merged ones.
// Counts and CPU seconds add up; the dispatch lag and CPU share are the
// worst worker's, since each worker's own machine is what can saturate (a
// merged p99 would need every worker's lags, which run.json does not keep:
// the worst worker's p99 bounds it from above).
func addClient(m *record.PointClient, pc record.PointClient) {
	c, w := &m.Client, pc.Client
	c.Sent += w.Sent
	c.Dropped += w.Dropped
	c.InFlightPeak += w.InFlightPeak
	c.CPUSeconds += w.CPUSeconds
	c.CPUPercent = max(c.CPUPercent, w.CPUPercent)
	c.LagP50MS = max(c.LagP50MS, w.LagP50MS)
	c.LagP90MS = max(c.LagP90MS, w.LagP90MS)
	c.LagP99MS = max(c.LagP99MS, w.LagP99MS)
	c.LagMaxMS = max(c.LagMaxMS, w.LagMaxMS)
	c.Interrupted = c.Interrupted || w.Interrupted
	if l := pc.SimClockLostMS; l != nil && (m.SimClockLostMS == nil || *l > *m.SimClockLostMS) {
		// each worker its own simulator: the point is as behind as the
		// most behind of them
		m.SimClockLostMS = new(*l)
	}
	if pc.Span.Empty() {
		return
	}
	if m.Span.Empty() || pc.StartNS < m.StartNS {
		m.StartNS = pc.StartNS
	}
	m.EndNS = max(m.EndNS, pc.EndNS)
}
