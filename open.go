package servebench

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/shard"
)

// Open reads the run directory dir, written by Run or Judge with
// Options.OutDir or by servebench run --out, as servebench report reads
// it: the summary recomputed from its records, a damaged records line
// skipped and named in Result.Warnings, a run killed before it finished
// summarised from the records it wrote, with Interrupted set. A Result
// of Open can be compared (Compare) with another, as servebench compare
// compares two directories.
func Open(dir string) (*Result, error) { return OpenRuns([]string{dir}, OpenOptions{}) }

// OpenOptions tune OpenRuns; the zero value reads as Open does.
type OpenOptions struct {
	// Strict refuses a records file with a damaged line instead of
	// skipping the line with a warning (servebench report --strict).
	Strict bool
	// Slice cuts each load into slices of this much model time, checked
	// for drift (servebench report --slice); 0: the run's own slices
	// (servebench run --slice), if any.
	Slice time.Duration
	// Stdin holds the records of a dir given as "" or "-", as
	// records.jsonl holds them (servebench report - < records.jsonl).
	Stdin io.Reader
	// Warn, when set, receives each warning as reading finds it, and
	// Result.Warnings stays empty.
	Warn func(string)
	// Names, when set, are how the user named the runs, one per dir,
	// where not by the directory: a run of servebench history named by
	// its id (servebench compare 12 14). A Comparison calls such a run
	// "run NAME (DIR)".
	Names []string
}

// OpenRuns reads one run as Open does, with opt's knobs: dirs are run
// directories or records files. Several runs of one server (repeats, or
// the same deployment on other days) are read into one Result, to be one
// side of a Comparison (servebench compare A1,A2,A3 B1,B2,B3): each run's
// loads are repeats, so the intervals resample runs, and its Summary holds
// every run's loads with the first run's context, a later run's warnings
// naming it (Records counts them all; Interrupted is the first run's).
func OpenRuns(dirs []string, opt OpenOptions) (*Result, error) {
	if len(dirs) == 0 {
		return nil, errors.New("servebench: OpenRuns takes at least one run directory")
	}
	if opt.Names != nil && len(opt.Names) != len(dirs) {
		return nil, errors.New("servebench: OpenOptions.Names names each dir, or none")
	}
	paths := make([]compare.RunPath, len(dirs))
	for i, d := range dirs {
		if (d == "" || d == "-") && opt.Stdin == nil {
			return nil, fmt.Errorf("servebench: run %q is read from OpenOptions.Stdin, which is nil", d)
		}
		paths[i] = compare.RunPath{Name: d, Path: d}
		if opt.Names != nil {
			paths[i].Name = opt.Names[i]
		}
	}
	r := &Result{}
	o := rundir.Options{Strict: opt.Strict, Slice: opt.Slice, SliceSet: opt.Slice > 0,
		Observe:     func(*record.Record) { r.Records++ },
		Warn:        opt.Warn,
		RunWarnings: shard.Warnings}
	if o.Warn == nil {
		o.Warn = func(w string) { r.Warnings = append(r.Warnings, w) }
	}
	side, _, err := compare.ReadSide(paths, o, func(path string, o rundir.Options) (*metrics.Summary, struct{}, error) {
		s, err := rundir.Summarize(path, opt.Stdin, o)
		return s, struct{}{}, err
	})
	if err != nil {
		return nil, err
	}
	r.Summary, r.eval, r.name, r.dirs = side.Summary, side.Eval, side.Name, side.Dirs
	r.Interrupted = r.Summary.Run != nil && r.Summary.Run.Interrupted
	return r, nil
}
