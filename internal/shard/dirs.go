package shard

import (
	"errors"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// ReadAll reads dirs as the workers of one sharded run: runs are the
// directories that hold a run of their own instead (ErrNotShard), for the
// caller to point at comparing them.
func ReadAll(dirs []string) (workers []*Worker, runs []string, err error) {
	for _, d := range dirs {
		w, err := Read(d)
		switch {
		case errors.Is(err, ErrNotShard):
			runs = append(runs, d)
			continue
		case err != nil:
			return nil, nil, err
		}
		workers = append(workers, w)
	}
	return workers, runs, nil
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
