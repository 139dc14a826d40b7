// Package rundir owns the run directory (servebench run --out DIR,
// docs/OUTPUT.md): the names of its files, creating one and writing its
// files whole, and reading one back under one policy. Every reader (report,
// compare, history import, the shard merge, calibrate and sim --calibrate, plan
// --compare, the verification rigs) goes through it, so that a damaged
// line, a duplicated record, a damaged run.json, a missing summary.json and
// a sped-up simulator's clock are handled the same way everywhere; no
// other package names a file inside a run directory.
package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File names inside a run directory.
const (
	// RecordsFile holds a record per request, written as each ends.
	RecordsFile = "records.jsonl"
	// RecordsGzipFile holds the records instead of RecordsFile when the
	// run compresses them (run --compress gzip); RecordsPath finds either.
	RecordsGzipFile = RecordsFile + ".gz"
	// RunFile is the run's context, rewritten after each load point.
	RunFile = "run.json"
	// SummaryFile is the per-point summary, written at the end.
	SummaryFile = "summary.json"
	// TelemetryFile holds the telemetry samples, a line each as read.
	TelemetryFile = "telemetry.jsonl"
	// ReportFile is the HTML report a finished run writes.
	ReportFile = "report.html"
	// ReserveFile holds reserveSize bytes of the run's disk while it
	// runs (Writer), so that a disk that fills during the run still takes
	// the run.json and summary.json that say why it stopped.
	ReserveFile = ".reserve"
	reserveSize = 64 << 10
	// tmpSuffix names the temporary file a whole-file write renames.
	tmpSuffix = ".tmp"
)

// Errors of the run directory.
var (
	// ErrRunExists: the directory holds a run already; a run never
	// overwrites another.
	ErrRunExists = errors.New("already holds a run")
	// ErrRunDir: the directory cannot be created or written.
	ErrRunDir = errors.New("run directory")
)

// Check is ErrRunExists when dir holds a run already, so that a run can
// say so before it starts a server or asks one anything. Creating checks
// again: two runs started at once cannot share a directory.
func Check(dir string) error {
	if dir == "" {
		return nil
	}
	for _, name := range []string{RecordsFile, RecordsGzipFile, TelemetryFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s %w (%s)", dir, ErrRunExists, name)
		}
	}
	return nil
}

// RecordsPath returns the records file of the run directory dir:
// records.jsonl, or records.jsonl.gz when the run wrote its records
// compressed (run --compress gzip); record.NewReader reads either. When dir
// holds neither, it returns the plain name, whose opening then fails with
// the name a user expects.
func RecordsPath(dir string) string {
	if p, ok := recordsIn(dir); ok {
		return p
	}
	return filepath.Join(dir, RecordsFile)
}

// recordsIn returns the records file dir holds, if any.
func recordsIn(dir string) (string, bool) {
	for _, name := range []string{RecordsFile, RecordsGzipFile} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// IsRun reports whether dir holds a run's run.json (damaged or not): what
// tells a run directory from a folder of them.
func IsRun(dir string) bool { return exists(filepath.Join(dir, RunFile)) }

// Finished reports whether dir holds the summary.json a run writes at its
// end: a run killed outright has none.
func Finished(dir string) bool { return exists(filepath.Join(dir, SummaryFile)) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Resolved is the run directory path made absolute with its links
// followed, so that two names of one directory compare equal (the same
// run twice); path as given when that fails.
func Resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
