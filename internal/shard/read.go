// Package shard merges the run directories of a sharded run's workers (run
// --shard I/N) into one run: it checks that they are the workers of one
// run, all of them, places their records on one clock, and summarises
// every load point from all records, with each worker's own client figures
// and start offset beside it (docs/DISTRIBUTED.md).
package shard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// Worker is one worker's run directory: its run.json, and whether it
// finished.
type Worker struct {
	Dir string
	Run *record.Run
	// Finished: summary.json is there and the run was not interrupted.
	Finished bool
	// epoch is the wall-clock time of the worker's records' zero.
	epoch time.Time
	// warnings say what reading the directory recovered (a damaged
	// run.json taken from summary.json), for the merged summary.
	warnings []string
}

// ErrNotShard: a directory holds a run that was not one worker of a
// sharded run.
var ErrNotShard = errors.New("not a worker of a sharded run (run --shard)")

// Read reads a worker's run directory. A directory whose run.json names no
// shard is returned with ErrNotShard, so that a caller can tell a list of
// shards from a list of separate runs. A damaged run.json is taken from
// summary.json as every reader of a run directory takes it (rundir); one
// that a killed worker left damaged cannot say which worker it was.
func Read(dir string) (*Worker, error) {
	w := &Worker{Dir: dir}
	run, err := rundir.LoadRun(dir, func(s string) { w.warnings = append(w.warnings, s) })
	if err == nil && run == nil {
		_, err = rundir.ReadRun(dir) // missing, or damaged past recovery: its error names the file
	}
	if err != nil {
		return nil, err
	}
	w.Run = run
	if run.Shard == nil {
		return w, fmt.Errorf("%s: %w", dir, ErrNotShard)
	}
	if w.epoch, err = time.Parse(time.RFC3339Nano, run.Started); err != nil {
		return nil, fmt.Errorf("%s: started %q: %w", filepath.Join(dir, rundir.RunFile), run.Started, err)
	}
	w.Finished = rundir.Finished(dir) && !run.Interrupted
	return w, nil
}

// Name is how messages name the worker: "worker 2 (runs/w2)".
func (w *Worker) Name() string {
	return fmt.Sprintf("worker %d (%s)", w.Run.Shard.Index, w.Dir)
}

// records streams the worker's records to add, as measured, under the
// policy of every reader of a run directory (rundir.ReadRecords).
func (w *Worker) records(strict bool, add func(*record.Record)) (*rundir.Read, error) {
	path := rundir.RecordsPath(w.Dir)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Dir, err)
	}
	defer f.Close()
	return rundir.ReadRecords(f, path, strict, add)
}

// sameRun returns "" when w is a worker of the same run as ref, else what
// differs.
func sameRun(ref, w *record.Run) string {
	type field struct {
		name string
		a, b any
	}
	for _, f := range []field{
		{"worker count", ref.Shard.Count, w.Shard.Count},
		{"seed", ref.Seed, w.Seed},
		{"target", ref.Target.URL, w.Target.URL},
		{"api", ref.Target.API, w.Target.API},
		{"model", ref.Target.Model, w.Target.Model},
		{"prompt tokens", ref.PromptTokens, w.PromptTokens},
		{"output tokens", ref.OutputTokens, w.OutputTokens},
		{"start mark", ref.StartAt, w.StartAt},
		{"time scale", ref.Scale(), w.Scale()},
	} {
		if f.a != f.b {
			return fmt.Sprintf("%s %v, not %v", f.name, f.b, f.a)
		}
	}
	for i := range min(len(ref.Points), len(w.Points)) {
		if a, b := ref.Points[i], w.Points[i]; a.Index != b.Index || a.Load != b.Load {
			return fmt.Sprintf("load point %d is %s, not %s", b.Index, b.Load.Label(), a.Load.Label())
		}
	}
	return ""
}

// All reports whether every directory holds a worker of a sharded run
// (its run.json names a shard); unreadable ones count as not.
func All(dirs []string) bool {
	for _, d := range dirs {
		if _, err := Read(d); err != nil {
			return false
		}
	}
	return len(dirs) > 0
}
