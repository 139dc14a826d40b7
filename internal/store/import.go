package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// ReadEntry reads a run directory for the history: run.json for the run's
// context (a damaged one recovered as report recovers it), summary.json
// for its points and verdict, or, when the run left none (killed) or a
// damaged one, the summary rebuilt from its records as report rebuilds it
// under o. Warnings go to o.Warn.
func ReadEntry(dir string, o rundir.Options) (*Entry, error) {
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if !rundir.IsRun(dir) {
		return nil, fmt.Errorf("no %s: not a run directory written by servebench run --out", rundir.RunFile)
	}
	// Held back: a summary rebuilt from the records says them again.
	var runWarnings []string
	run, err := rundir.LoadRun(dir, func(w string) { runWarnings = append(runWarnings, w) })
	if err != nil {
		return nil, err
	}
	e := &Entry{Run: run, Dir: abs}
	r, err := rundir.ReadRecorded(dir)
	var damaged *rundir.RecordedError
	switch {
	case r != nil:
		for _, w := range runWarnings {
			warn(w)
		}
		e.Points, e.Objective, e.Verdict = r.Points, r.Objective, r.Verdict
		return e, nil
	case errors.As(err, &damaged):
		warn(fmt.Sprintf("%s is damaged (%v): stored from the summary rebuilt from the records, without a verdict", damaged.Path, damaged.Err))
	case err != nil:
		return nil, err
	default:
		warn(fmt.Sprintf("%s has no %s (the run was killed): stored from the summary rebuilt from its records", dir, rundir.SummaryFile))
	}
	s, err := rundir.Summarize(dir, nil, o)
	if err != nil {
		return nil, err
	}
	e.Run, e.Points = s.Run, s.Points
	return e, nil
}

// Import stores the run of one directory, read by ReadEntry; replaced says
// the history held it already (and it was updated).
func (s *DB) Import(ctx context.Context, dir string, o rundir.Options) (id int64, replaced bool, err error) {
	e, err := ReadEntry(dir, o)
	if err != nil {
		return 0, false, err
	}
	id, replaced, err = s.Put(ctx, e)
	if err != nil && e.Validate() == nil {
		return 0, false, &PutError{err}
	}
	return id, replaced, err
}

// ImportAll imports the runs of args as Import does, each arg a run
// directory or a directory of them (rundir.Runs), and hands each
// directory's outcome to each: its id and whether the history held it
// already, or why it was not imported. A directory that cannot be read
// does not stop the others: failed counts them, of total. A failure of
// the database itself (a *PutError) stops the import, and its error says
// how many were imported before it.
func (s *DB) ImportAll(ctx context.Context, args []string, o rundir.Options, each func(dir string, id int64, replaced bool, err error)) (failed, total int, err error) {
	var dirs []string
	for _, arg := range args {
		dirs = append(dirs, rundir.Runs(arg)...)
	}
	done := 0
	for _, dir := range dirs {
		id, replaced, err := s.Import(ctx, dir, o)
		if _, ok := errors.AsType[*PutError](err); ok {
			// the database, not the directory: the next would fail alike
			return failed, len(dirs), fmt.Errorf("%w; %d of %d run directories were imported before it failed", err, done, len(dirs))
		}
		each(dir, id, replaced, err)
		if err != nil {
			failed++
			continue
		}
		done++
	}
	return failed, len(dirs), nil
}

// PutError is a failure of the history database itself while storing a
// run that was read whole: no fault of the run directory, and the next
// would fail alike.
type PutError struct{ Err error }

func (e *PutError) Error() string { return e.Err.Error() }
func (e *PutError) Unwrap() error { return e.Err }

// Add stores a finished run in the history database at path, opened for
// it alone.
func Add(ctx context.Context, path string, e *Entry) (int64, error) {
	db, err := Open(ctx, path, Options{})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	id, _, err := db.Put(ctx, e)
	return id, err
}

// AddRun stores a finished run's summary (with its objective and verdict
// when it was judged) in the history database at path, the run's
// directory made absolute ("" for a run kept in no directory).
func AddRun(ctx context.Context, path string, s *metrics.Summary, o *slo.Objective, v *slo.Verdict, dir string) (int64, error) {
	if dir != "" {
		var err error
		if dir, err = filepath.Abs(dir); err != nil {
			return 0, err
		}
	}
	e, err := NewEntry(s, o, v, dir)
	if err != nil {
		return 0, err
	}
	return Add(ctx, path, e)
}
