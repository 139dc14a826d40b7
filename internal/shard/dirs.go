package shard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// SeparateError: some of the directories given as a sharded run's workers
// hold a run of their own instead (ErrNotShard), for the caller to point
// at comparing them. Its message names them, and a worker among the
// directories when there is one.
type SeparateError struct {
	Runs   []string // the directories of runs of their own
	Worker string   // the first worker's directory, or ""
}

func (e *SeparateError) Error() string {
	if e.Worker != "" {
		return fmt.Sprintf("%s are not workers of a sharded run, as %s is", strings.Join(e.Runs, ", "), e.Worker)
	}
	return strings.Join(e.Runs, ", ") + " are separate runs"
}

// ReadWorkers reads dirs as the workers of one sharded run; directories
// that hold a run of their own instead are a *SeparateError.
func ReadWorkers(dirs []string) ([]*Worker, error) {
	var workers []*Worker
	var runs []string
	for _, d := range dirs {
		w, err := Read(d)
		switch {
		case errors.Is(err, ErrNotShard):
			runs = append(runs, d)
			continue
		case err != nil:
			return nil, err
		}
		workers = append(workers, w)
	}
	if len(runs) > 0 {
		se := &SeparateError{Runs: runs}
		if len(workers) > 0 {
			se.Worker = workers[0].Dir
		}
		return nil, se
	}
	return workers, nil
}

// MergeInto merges workers as Merge does and, when out is not "", writes
// the merged run to the new run directory out (records, run.json and
// summary.json), which a failed merge leaves without a run.
func MergeInto(workers []*Worker, opt Options, out string) (*metrics.Summary, error) {
	if out == "" {
		return Merge(workers, opt)
	}
	d, err := rundir.Create(out, false)
	if err != nil {
		return nil, err
	}
	records := record.NewWriter(d.Records())
	opt.Records = records.Write
	s, err := Merge(workers, opt)
	if err != nil {
		d.Remove()
		return nil, err
	}
	if err = d.Close(records); err == nil {
		err = d.Finish(s.Run, s)
	}
	return s, err
}
