package servebench

import (
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/shard"
	"github.com/servebench/servebench/internal/slo"
)

// Open reads the run directory dir, written by Run or Judge with
// Options.OutDir or by servebench run --out, as servebench report reads
// it: the summary recomputed from its records, a damaged records line
// skipped and named in Result.Warnings, a run killed before it finished
// summarised from the records it wrote, with Interrupted set. A Result
// of Open can be compared (Compare) with another, as servebench compare
// compares two directories.
func Open(dir string) (*Result, error) {
	ev := &slo.Evaluator{}
	r := &Result{eval: ev, name: dir, dir: rundir.Resolved(dir)}
	s, err := rundir.Summarize(dir, nil, rundir.Options{
		Observe:     func(rec *record.Record) { r.Records++; ev.Add(rec) },
		Warn:        func(w string) { r.Warnings = append(r.Warnings, w) },
		RunWarnings: shard.Warnings})
	if err != nil {
		return nil, err
	}
	r.Summary, r.Interrupted = s, s.Run != nil && s.Run.Interrupted
	return r, nil
}
