package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// failingFile is a records file whose Sync or Close fails.
type failingFile struct {
	*os.File
	sync, close error
}

func (f *failingFile) Sync() error {
	if f.sync != nil {
		return f.sync
	}
	return f.File.Sync()
}

func (f *failingFile) Close() error {
	err := f.File.Close()
	if f.close != nil {
		return f.close
	}
	return err
}

// TestCloseReportsRecordsFileErrors: a records file that cannot be
// flushed or closed may have lost records; the error reaches the caller
// with the file's name, the room held is given back, and run.json and
// summary.json are still written.
func TestCloseReportsRecordsFileErrors(t *testing.T) {
	tests := []struct {
		name        string
		sync, close error
		want        string
	}{
		{"sync fails", errors.New("input/output error"), nil, "flushing "},
		{"close fails", nil, errors.New("quota exceeded"), "closing "},
		{"both fine", nil, nil, ""},
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), "r")
		w, err := Create(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		w.closing = &failingFile{File: w.f, sync: tt.sync, close: tt.close}
		err = w.Close(record.NewWriter(w.Records()))
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want+filepath.Join(dir, RecordsFile))) {
			t.Errorf("%s: Close error %v, want one starting %q and naming the file", tt.name, err, tt.want)
		}
		if _, err := os.Stat(filepath.Join(dir, ReserveFile)); err == nil {
			t.Errorf("%s: the reserve is still held after the records were closed", tt.name)
		}
		if err := w.Finish(&record.Run{Ended: "now"}, map[string]string{"schema": "s"}); err != nil {
			t.Errorf("%s: Finish: %v", tt.name, err)
		}
		for _, name := range []string{RunFile, SummaryFile} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: %s: %v", tt.name, name, err)
			}
		}
	}
}
