package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// TestCloseCompletesRunFiles: closing a session flushes the records and
// completes run.json and summary.json (rundir's Writer test has the
// records file failing to flush or close).
func TestCloseCompletesRunFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	s, err := Open(Config{OutDir: dir, Run: record.Run{Target: record.Target{Model: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	// run.json is there from the start, with the client's CPU count.
	var run record.Run
	if b, err := os.ReadFile(filepath.Join(dir, rundir.RunFile)); err != nil || json.Unmarshal(b, &run) != nil ||
		run.Target.Model != "m" || run.ClientCPUs < 1 || run.Ended != "" {
		t.Fatalf("run.json at the start: %v %+v", err, run)
	}
	res, err := s.Close(context.Background())
	if err != nil || res == nil {
		t.Errorf("Close: %v, result %v", err, res)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rundir.RunFile)); !strings.Contains(string(b), `"ended"`) {
		t.Error("run.json not completed at the end")
	}
}

// fullFile is a records file on a disk that fills: after room bytes every
// write fails, the one that crosses the limit having written part of its
// line, as a full disk does.
type fullFile struct {
	*os.File
	room int
}

func (f *fullFile) Write(b []byte) (int, error) {
	if len(b) <= f.room {
		f.room -= len(b)
		return f.File.Write(b)
	}
	n, _ := f.File.Write(b[:f.room])
	f.room = 0
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: errors.New("no space left on device")}
}

// TestRecordsFileFullStopsTheRun: the first record that cannot be written
// stops the run (failed closes) and is neither counted nor left torn in
// the file; the error names the file, the cause and the count on disk.
func TestRecordsFileFullStopsTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	s, err := newSink(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var one bytes.Buffer
	record.NewWriter(&one).Write(&record.Record{Schema: record.Schema, Phase: record.PhaseMeasured, ID: 1})
	line := one.Bytes()
	s.lines.f = &fullFile{File: s.f.(*os.File), room: 3*len(line) + 10}
	for i := range 5 {
		s.emit(&record.Record{Phase: record.PhaseMeasured, ID: int64(i + 1)})
	}
	select {
	case <-s.failed:
	default:
		t.Error("the run was not stopped at the first record lost")
	}
	re, ok := errors.AsType[*RecordsError](s.writeErr())
	if !ok || re.Written != 3 || s.count() != 3 || !strings.Contains(re.Error(), filepath.Join(dir, rundir.RecordsFile)+" could not be written: no space left on device") {
		t.Errorf("error %v, %d counted: want 3 written and counted, the file and the cause named", s.writeErr(), s.count())
	}
	s.close()
	b, _ := os.ReadFile(filepath.Join(dir, rundir.RecordsFile))
	if want := strings.Repeat(string(line), 3); len(b) != len(want) {
		t.Errorf("records file holds %d bytes, want the 3 whole lines (%d)", len(b), len(want))
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ReserveFile)); err == nil {
		t.Error("the reserve is still held after the run ended")
	}
}
