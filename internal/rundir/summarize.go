package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// Options of Summarize.
type Options struct {
	// Strict refuses a records file with a damaged line.
	Strict bool
	// Slice cuts each point into slices of this much model time when
	// SliceSet; otherwise the run's own slices apply.
	Slice    time.Duration
	SliceSet bool
	// Observe, when set, sees every record in model time, but those of a
	// point measured again (a capacity search's superseded point).
	Observe func(*record.Record)
	// Sample, when set, sees every telemetry sample of the run directory,
	// in time order, as the summary takes it.
	Sample func(*telemetry.Sample)
	// Warn receives each warning for the user; nil drops them.
	Warn func(string)
	// RunWarnings, when set, says what a merged sharded run's workers
	// warned of (shard.Warnings), first in the summary's warnings.
	RunWarnings func(*record.Run) []string
}

// ErrNoRecords: the records read hold no record.
var ErrNoRecords = errors.New("holds no records")

// SourceError: the run directory or records file named cannot be opened.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// Hint says what the command line reads.
func (e *SourceError) Hint() string {
	return "servebench report runs/a (a directory written by servebench run --out)"
}

// Summarize rebuilds a run's summary from its records, as servebench
// report does: from the run directory or records file at path, or from in
// when path is "" or "-". run.json beside the records gives the context
// (LoadRun's policy), the records are read under ReadRecords' and
// summarised in model time, and telemetry.jsonl's samples are summarised
// with the events the records stand for. A run that left no summary.json
// was interrupted, and its summary says so (unless run.json's stopped says
// why it ended).
func Summarize(path string, in io.Reader, o Options) (*metrics.Summary, error) {
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	src := in
	var run *record.Run
	name, dir := "standard input", ""
	if path != "" && path != "-" {
		st, err := os.Stat(path)
		if err != nil {
			return nil, &SourceError{err}
		}
		if st.IsDir() {
			path, dir = RecordsPath(path), path
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, &SourceError{err}
		}
		defer f.Close()
		src, name = f, path
		// run.json beside the records makes their directory a run's
		var found bool
		if run, found, err = loadRun(filepath.Dir(path), warn); err != nil {
			return nil, err
		}
		if found {
			dir = filepath.Dir(path)
		}
	}
	// The run's own slices unless asked for others.
	agg := metrics.Aggregator{Slice: run.Slice()}
	if o.SliceSet {
		agg.Slice = o.Slice
	}
	agg.FromRun(run)
	// One run's records file holds them in the order they ended; a merged
	// run's holds its workers' one after the other.
	agg.Ordered = run != nil && len(run.Workers) == 0
	var events []telemetry.Sample // what the records stand for on the timeline
	read, err := ReadRecords(src, name, o.Strict, func(r *record.Record) {
		if e, ok := telemetry.RecordEvent(r); ok {
			events = append(events, e)
		}
		rec := r.ModelTime(run.Scale()) // a sped-up simulator's records, in model time
		agg.Add(rec)
		// A point measured again is judged by the later one, as run did.
		if o.Observe != nil && !run.Superseded(rec.Point) {
			o.Observe(rec)
		}
	})
	if err != nil {
		return nil, err
	}
	for _, w := range read.Warnings("--strict") {
		warn(w)
	}
	if dir != "" {
		// a damaged run.json rebuilt, a killed run's last point added
		run = read.Complete(run)
	}
	if read.Records == 0 {
		return nil, fmt.Errorf("%s %w", name, ErrNoRecords)
	}
	unfinished := dir != "" && !Finished(dir)
	stopped := run != nil && run.Stopped != "" // it says why it ended
	if unfinished && run != nil && !stopped {
		run.Interrupted = true
	}
	s := metrics.Summarize(run, &agg)
	if run != nil && len(run.Workers) > 0 && o.RunWarnings != nil {
		s.Warnings = append(o.RunWarnings(run), s.Warnings...)
	}
	if dir != "" {
		if err := addTelemetry(s, dir, events, o.Sample, warn); err != nil {
			return nil, err
		}
	}
	if unfinished && !stopped {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s has no %s: the run was interrupted before it finished (killed, or a second Ctrl-C); this report is rebuilt from the %d records it wrote", dir, SummaryFile, read.Records))
	}
	return s, nil
}

// addTelemetry summarises dir's telemetry.jsonl, with the records'
// events, into s as run did, in one pass over the file; a run without
// the file (sampled nothing, or --no-telemetry) has no telemetry. observe,
// when not nil, sees each sample as the summary takes it.
func addTelemetry(s *metrics.Summary, dir string, events []telemetry.Sample, observe func(*telemetry.Sample), warn func(string)) error {
	damaged := 0
	scan := func(fn func(*telemetry.Sample)) (err error) {
		damaged, err = ScanTelemetry(dir, fn)
		return err
	}
	ordered := telemetry.InTimeOrder(scan, events)
	if observe != nil {
		ordered = ordered.Observed(observe)
	}
	if err := s.AddTelemetry(ordered); err != nil {
		return err
	}
	if damaged > 0 {
		warn(telemetryWarning(dir, damaged))
	}
	return nil
}

// SummaryJSON returns dir's summary.json as the run wrote it; when the run
// left none (it was killed) or a damaged one, but its records are there,
// the summary rebuilt from them (Summarize, with o) in summary.json's form,
// and rebuilt is true.
func SummaryJSON(dir string, o Options) (b []byte, rebuilt bool, err error) {
	path := filepath.Join(dir, SummaryFile)
	b, err = os.ReadFile(path)
	switch {
	case err == nil && json.Valid(b):
		return b, false, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, false, err
	}
	if _, ok := recordsIn(dir); !ok {
		if err == nil {
			err = &RecordedError{Path: path, Err: errors.New("not valid JSON")}
		}
		return nil, false, err
	}
	s, err := Summarize(dir, nil, o)
	if err != nil {
		return nil, false, err
	}
	b, err = json.Marshal(s)
	return b, true, err
}
