package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// CheckRunDir is ErrRunExists when dir holds a run already, so that a run
// can say so before it starts a server or asks one anything. Writing
// checks again: two runs started at once cannot share a directory.
func CheckRunDir(dir string) error {
	if dir == "" {
		return nil
	}
	for _, name := range []string{RecordsFile, RecordsFileGzip, telemetry.File} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s %w (%s)", dir, ErrRunExists, name)
		}
	}
	return nil
}

// RunDir writes a run directory from records made elsewhere: a sharded
// run's workers merged into one run (report DIR0 DIR1 ... --out DIR). It
// keeps the layout and the rules of a run's own directory: records.jsonl
// created only where no run is, run.json and summary.json written whole.
type RunDir struct{ s *sink }

// CreateRunDir creates dir's records file; ErrRunExists when dir holds a
// run already.
func CreateRunDir(dir string) (*RunDir, error) {
	s, err := newSink(dir, "")
	if err != nil {
		return nil, err
	}
	return &RunDir{s: s}, nil
}

// Write appends one record.
func (d *RunDir) Write(r *record.Record) error { return d.s.w.Write(r) }

// Finish flushes the records and writes run.json and summary.json.
func (d *RunDir) Finish(run *record.Run, sum any) error {
	if err := d.s.close(); err != nil {
		return err
	}
	return d.s.finish(run, sum)
}

// Abandon closes and removes the records file of a directory that will
// not be finished (the merge failed), so that nothing there passes for a
// run and the directory can be used again.
func (d *RunDir) Abandon() { d.s.remove() }

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
	for _, name := range []string{RecordsFile, RecordsFileGzip} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}
