package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/servebench/servebench/internal/record"
)

// Writer is a run directory being written: its records file, created
// only where no run is, and the room the run keeps on its disk until it
// ends. The caller writes the records (the run's own sink, or a merge);
// run.json and summary.json are written whole beside them.
type Writer struct {
	dir     string
	f       *os.File
	closing file   // f as Close syncs and closes it; a test's file that fails
	reserve string // "" once given back
}

// file is the records file as Close sees it.
type file interface {
	Sync() error
	Close() error
	Name() string
}

// Create creates dir when needed and its records file (records.jsonl, or
// records.jsonl.gz when gzip); ErrRunExists when dir holds a run already,
// ErrRunDir when it cannot be written. A disk full from the start leaves
// nothing behind that would block a rerun.
func Create(dir string, gzip bool) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrRunDir, dir, err)
	}
	name := RecordsFile
	if gzip {
		name = RecordsGzipFile
	}
	if other, ok := recordsIn(dir); ok {
		return nil, fmt.Errorf("%s %w (%s)", dir, ErrRunExists, filepath.Base(other))
	}
	path := filepath.Join(dir, name)
	f, err := createNew(dir, name)
	if err != nil {
		return nil, err
	}
	reserve := filepath.Join(dir, ReserveFile)
	if err := os.WriteFile(reserve, make([]byte, reserveSize), 0o644); err != nil {
		f.Close()
		os.Remove(path)
		os.Remove(reserve)
		return nil, fmt.Errorf("%w %s: no room to start a run: %w", ErrRunDir, dir, Cause(err))
	}
	return &Writer{dir: dir, f: f, closing: f, reserve: reserve}, nil
}

// CreateTelemetry creates dir's telemetry.jsonl, for the sampler to write
// its samples to; ErrRunExists when dir holds one already.
func CreateTelemetry(dir string) (*os.File, error) { return createNew(dir, TelemetryFile) }

// createNew creates dir/name where no such file is.
func createNew(dir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s %w (%s)", dir, ErrRunExists, name)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrRunDir, dir, err)
	}
	return f, nil
}

// Records is the records file, for the caller to write records to.
func (w *Writer) Records() *os.File { return w.f }

// Release gives back the room held on the run's disk, before the last
// writes of a run that ends.
func (w *Writer) Release() {
	if w.reserve != "" {
		os.Remove(w.reserve)
		w.reserve = ""
	}
}

// Close ends rec, the record stream written to the records file (a
// compressed stream's trailer), after giving back the room held; then it
// flushes the records file to disk and closes it. A failure of any means
// records may be lost, which the user must hear of.
func (w *Writer) Close(rec *record.Writer) error {
	w.Release()
	if w.f == nil {
		return nil
	}
	f := w.closing
	w.f, w.closing = nil, nil
	if err := rec.Close(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("flushing %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", f.Name(), err)
	}
	return nil
}

// Remove closes and removes what Create made and run.json, for a run that
// could not start or a merge that failed: nothing there passes for a run,
// and the directory can be used again.
func (w *Writer) Remove() {
	name := ""
	if w.f != nil {
		name = w.f.Name()
		w.closing.Close()
		w.f, w.closing = nil, nil
	}
	w.Release()
	if name != "" {
		os.Remove(name)
	}
}

// RemoveRun removes run.json, for a run that could not start after
// writing it.
func (w *Writer) RemoveRun() { os.Remove(filepath.Join(w.dir, RunFile)) }

// WriteRun writes run.json whole.
func (w *Writer) WriteRun(run *record.Run) error {
	return writeJSON(filepath.Join(w.dir, RunFile), run)
}

// Finish completes run.json and writes summary.json (the summary, or what
// the run decorates it with) after the records are closed.
func (w *Writer) Finish(run *record.Run, sum any) error {
	if err := w.WriteRun(run); err != nil {
		return err
	}
	return writeJSON(filepath.Join(w.dir, SummaryFile), sum)
}

// WriteReport writes the run's HTML report whole.
func WriteReport(dir string, page []byte) error {
	return writeFile(filepath.Join(dir, ReportFile), page)
}

// writeJSON writes v to path through a temporary file and a rename, so a
// reader never sees half a file.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// writeFile writes b to path through a temporary file and a rename: a
// reader never sees half a file, and a write that fails (a full disk)
// leaves neither a torn file nor the temporary one.
func writeFile(path string, b []byte) error {
	tmp := path + tmpSuffix
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, Cause(err))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Cause is the operating system's reason for a failed file operation (no
// space left on device), without the path a caller names already.
func Cause(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
