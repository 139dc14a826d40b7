package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/store"
)

func historyImport(ctx context.Context, env *Env, args []string) error {
	var db string
	fs := newFlagSet(env, "history import", historyUsage)
	defineDB(fs, &db)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("servebench history import runs/a runs/b", "history import wants run directories (written by servebench run --out)")
	}
	path, err := historyPath(env, db)
	if err != nil {
		return usagef("servebench history import --db runs/history.db runs/a", "%v", err)
	}
	h, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return &Error{Err: err, Code: ExitFailure}
	}
	defer h.Close()
	var dirs []string
	for _, arg := range fs.Args() {
		dirs = append(dirs, runDirs(arg)...)
	}
	failed, done := 0, 0
	for _, dir := range dirs {
		err := importDir(ctx, env, h, dir)
		if _, ok := errors.AsType[*storeError](err); ok {
			// the database, not the directory: the next would fail alike
			return &Error{Err: fmt.Errorf("%w; %d of %d run directories were imported before it failed", err, done, len(dirs)),
				Hint: "the run directories are not at fault: repair or move the database aside, then import them again", Code: ExitFailure}
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "Error: %s: %s\n", dir, env.redact(err.Error()))
			failed++
			continue
		}
		done++
	}
	if failed > 0 {
		return &Error{Err: fmt.Errorf("%d of %d run directories were not imported (the others were)", failed, len(dirs)),
			Hint: "a run directory holds run.json, records.jsonl and summary.json, as servebench run --out writes them", Code: ExitFailure}
	}
	return nil
}

// runDirs is arg when it is a run directory (or not a directory at all,
// for importDir to explain), else the run directories directly inside it,
// as decide --out and a folder of runs lay them out.
func runDirs(arg string) []string {
	if rundir.IsRun(arg) {
		return []string{arg}
	}
	entries, err := os.ReadDir(arg)
	if err != nil {
		return []string{arg}
	}
	var dirs []string
	for _, e := range entries {
		if sub := filepath.Join(arg, e.Name()); e.IsDir() && rundir.IsRun(sub) {
			dirs = append(dirs, sub)
		}
	}
	if len(dirs) == 0 {
		return []string{arg}
	}
	return dirs
}

// importDir stores the run of one directory and says which id it has.
func importDir(ctx context.Context, env *Env, h *store.DB, dir string) error {
	e, err := loadEntry(env, dir)
	if err != nil {
		return err
	}
	id, replaced, err := h.Put(ctx, e)
	if err != nil && e.Validate() == nil {
		return &storeError{err}
	}
	if err != nil {
		return err
	}
	if replaced {
		fmt.Fprintf(env.Stdout, "run %d: %s (already in history, updated)\n", id, dir)
	} else {
		fmt.Fprintf(env.Stdout, "run %d: %s\n", id, dir)
	}
	return nil
}

// loadEntry reads a run directory: run.json for the run's context (a
// damaged one recovered as report recovers it), summary.json for its
// points and verdict, or, when the run left none (killed) or a damaged
// one, the summary rebuilt from its records as report does.
func loadEntry(env *Env, dir string) (*store.Entry, error) {
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
	e := &store.Entry{Run: run, Dir: abs}
	r, err := rundir.ReadRecorded(dir)
	var damaged *rundir.RecordedError
	switch {
	case r != nil:
		for _, w := range runWarnings {
			env.warn(w)
		}
		e.Points, e.Objective, e.Verdict = r.Points, r.Objective, r.Verdict
		return e, nil
	case errors.As(err, &damaged):
		fmt.Fprintf(env.Stderr, "warning: %s is damaged (%v): stored from the summary rebuilt from the records, without a verdict\n", damaged.Path, damaged.Err)
	case err != nil:
		return nil, err
	default:
		fmt.Fprintf(env.Stderr, "warning: %s has no %s (the run was killed): stored from the summary rebuilt from its records\n", dir, rundir.SummaryFile)
	}
	s, err := loadSummary(env, dir, false, sliceFlag{}, nil)
	if err != nil {
		return nil, err
	}
	e.Run, e.Points = s.Run, s.Points
	return e, nil
}

// storeError is a failure of the history database itself while storing a
// run that was read whole: no fault of the run directory.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }
