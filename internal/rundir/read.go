package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
)

// The one policy every reader of a run directory applies (docs/OUTPUT.md):
//
//   - a damaged records line is skipped, counted and named in a warning,
//     unless the read is strict, which refuses the file naming the line;
//   - a record repeating an id an earlier line holds is dropped, counted
//     once and named in a warning;
//   - a damaged run.json is taken from summary.json's copy when the run
//     finished, else rebuilt from the records, with a warning;
//   - records are summarised in model time: a sped-up simulator's (the
//     run's time scale) times are multiplied back;
//   - a damaged telemetry line is skipped and counted.

// Read is what a read of a records file found beside the records it
// handed over.
type Read struct {
	Name       string // the file read, or "standard input"
	Records    int    // records handed over
	Damaged    []*record.LineError
	Duplicates []record.Duplicate
	rd         *record.Reader
}

// ReadRecords reads the records of src (plain or gzip-compressed) under
// the policy, handing each record kept to each as measured; the record is
// valid until each returns. An error names the file (and the line, a
// *record.LineError, when strict).
func ReadRecords(src io.Reader, name string, strict bool, each func(*record.Record)) (*Read, error) {
	rd := record.NewReader(src)
	if !strict {
		rd.SkipDamaged()
	}
	read := &Read{Name: name, rd: rd}
	for rd.Next() {
		each(rd.Record())
		read.Records++
	}
	if err := rd.Err(); err != nil {
		return read, fmt.Errorf("%s: %w", name, err)
	}
	read.Damaged, read.Duplicates = rd.Damaged(), rd.Duplicates()
	return read, nil
}

// Complete returns run with what its run.json lacks taken from the records
// read: a nil run rebuilt, a killed run's last point added
// (record.Reader.Complete).
func (r *Read) Complete(run *record.Run) *record.Run { return r.rd.Complete(run) }

// maxNamedLines is how many damaged or duplicated lines a warning names;
// the rest are counted.
const maxNamedLines = 5

// Warnings says what the read passed over: the damaged lines skipped and
// the duplicated records dropped, each naming its first lines. strict, when
// not empty, is the flag that would refuse a damaged file.
func (r *Read) Warnings(strict string) []string {
	var w []string
	if d := r.Damaged; len(d) > 0 {
		refuse := ""
		if strict != "" {
			refuse = "; " + strict + " refuses the file"
		}
		w = append(w, fmt.Sprintf("%s: skipped %d damaged line(s), not counted: line %s (first: %v)%s",
			r.Name, len(d), named(d, func(e *record.LineError) string { return strconv.Itoa(e.Line) }), d[0].Err, refuse))
	}
	if d := r.Duplicates; len(d) > 0 {
		w = append(w, fmt.Sprintf("%s: dropped %d duplicated record(s), counted once: %s repeat an id an earlier line holds",
			r.Name, len(d), named(d, record.Duplicate.String)))
	}
	return w
}

// named lists the first maxNamedLines of items, and how many more.
func named[T any](items []T, name func(T) string) string {
	s := make([]string, 0, maxNamedLines)
	for _, it := range items[:min(len(items), maxNamedLines)] {
		s = append(s, name(it))
	}
	more := ""
	if len(items) > maxNamedLines {
		more = fmt.Sprintf(" and %d more", len(items)-maxNamedLines)
	}
	return strings.Join(s, ", ") + more
}

// ReadRun reads dir's run.json as written: the os error of a missing one
// (errors.Is(err, fs.ErrNotExist)), record.ErrRunDamaged for one that does
// not decode. LoadRun applies the policy to a damaged one.
func ReadRun(dir string) (*record.Run, error) { return record.ReadRun(filepath.Join(dir, RunFile)) }

// LoadRun reads dir's run.json under the policy: nil and no error when
// there is none (the records suffice); a damaged one is taken from
// summary.json's copy when the run finished, else nil for the records to
// rebuild (Read.Complete), with a warning to warn either way.
func LoadRun(dir string, warn func(string)) (*record.Run, error) {
	run, _, err := loadRun(dir, warn)
	return run, err
}

// loadRun is LoadRun, found telling whether dir holds a run.json at all
// (damaged or not).
func loadRun(dir string, warn func(string)) (run *record.Run, found bool, err error) {
	run, err = ReadRun(dir)
	switch {
	case err == nil:
		return run, true, nil
	case errors.Is(err, os.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, record.ErrRunDamaged):
		return recoverRun(dir, err, warn), true, nil
	default:
		return nil, false, err
	}
}

// recoverRun is the run of a directory whose run.json is damaged: the
// copy summary.json holds when the run finished, else nil, for the records
// to rebuild.
func recoverRun(dir string, damaged error, warn func(string)) *record.Run {
	if r, err := ReadRecorded(dir); err == nil && r != nil && r.Run != nil {
		warn(fmt.Sprintf("%v: the run is taken from %s instead", damaged, SummaryFile))
		return r.Run
	}
	warn(fmt.Sprintf("%v: the run is rebuilt from its records (target, load points); what only run.json held is missing "+
		"(client figures, seed, workload, and the time scale of a sped-up simulator, whose figures are then in its wall time)", damaged))
	return nil
}

// Recorded is summary.json as run writes it: the summary, and with an
// objective the objective (kept as written) and its verdict (slo.Report).
type Recorded struct {
	metrics.Summary
	Objective json.RawMessage `json:"objective"`
	Verdict   *slo.Verdict    `json:"verdict"`
}

// RecordedError: a summary.json that does not decode.
type RecordedError struct {
	Path string
	Err  error
}

func (e *RecordedError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *RecordedError) Unwrap() error { return e.Err }

// ReadRecorded reads dir's summary.json; (nil, nil) when the run left none
// (it did not finish), a *RecordedError when it is damaged.
func ReadRecorded(dir string) (*Recorded, error) {
	path := filepath.Join(dir, SummaryFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Recorded
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &RecordedError{Path: path, Err: err}
	}
	return &r, nil
}

// DecodeObjective decodes the objective a judged run recorded.
func (r *Recorded) DecodeObjective(dir string) (*slo.Objective, error) {
	var o *slo.Objective
	if len(r.Objective) > 0 {
		if err := json.Unmarshal(r.Objective, &o); err != nil {
			return nil, &RecordedError{Path: filepath.Join(dir, SummaryFile), Err: err}
		}
	}
	return o, nil
}

// ScanTelemetry calls fn with each sample of dir's telemetry.jsonl, in
// the file's order (telemetry.InTimeOrder puts them in time order),
// damaged lines skipped and counted: no sample and no error when the run
// has none.
func ScanTelemetry(dir string, fn func(*telemetry.Sample)) (damaged int, err error) {
	path := filepath.Join(dir, TelemetryFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if damaged, err = telemetry.ScanSamples(f, fn); err != nil {
		return damaged, fmt.Errorf("%s: reading %s: %w", path, TelemetryFile, err)
	}
	return damaged, nil
}

// telemetryWarning says how many damaged lines of dir's telemetry.jsonl a
// read skipped.
func telemetryWarning(dir string, damaged int) string {
	return fmt.Sprintf("%s: skipped %d damaged line(s), not counted", filepath.Join(dir, TelemetryFile), damaged)
}

// Records reads the run directory dir for a check of its records: its run
// (LoadRun) and its records under the policy (not strict), handing each to
// each in model time, and the warnings to warn. The run returned is
// completed from the records (nil only when there is neither).
func Records(dir string, warn func(string), each func(*record.Record)) (*record.Run, error) {
	run, err := LoadRun(dir, warn)
	if err != nil {
		return nil, err
	}
	path := RecordsPath(dir)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	scale := run.Scale()
	read, err := ReadRecords(f, path, false, func(r *record.Record) { each(r.ModelTime(scale)) })
	if err != nil {
		return nil, err
	}
	for _, w := range read.Warnings("") {
		warn(w)
	}
	return read.Complete(run), nil
}
