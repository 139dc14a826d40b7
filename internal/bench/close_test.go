package bench

import (
	"context"
	"encoding/json"
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
// with the file's name, and run.json and summary.json are still written.
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
		s, err := Open(Config{OutDir: dir, Run: record.Run{Target: record.Target{Model: "m"}}})
		if err != nil {
			t.Fatal(err)
		}
		// run.json is there from the start, with the client's CPU count.
		var run record.Run
		if b, err := os.ReadFile(filepath.Join(dir, RunFile)); err != nil || json.Unmarshal(b, &run) != nil ||
			run.Target.Model != "m" || run.ClientCPUs < 1 || run.Ended != "" {
			t.Fatalf("%s: run.json at the start: %v %+v", tt.name, err, run)
		}
		s.sink.f = &failingFile{File: s.sink.f.(*os.File), sync: tt.sync, close: tt.close}
		res, err := s.Close(context.Background())
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want+filepath.Join(dir, RecordsFile))) {
			t.Errorf("%s: Close error %v, want one starting %q and naming the file", tt.name, err, tt.want)
		}
		if res == nil {
			t.Errorf("%s: no result", tt.name)
		}
		if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err != nil {
			t.Errorf("%s: summary.json: %v", tt.name, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, RunFile)); !strings.Contains(string(b), `"ended"`) {
			t.Errorf("%s: run.json not completed at the end", tt.name)
		}
	}
}
