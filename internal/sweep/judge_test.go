package sweep

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// TestJudgeRunsNamesTheRunItCannotRead: a configuration whose run is gone
// is an error naming it, its reader's error kept for its hint; a failed
// configuration is not read.
func TestJudgeRunsNamesTheRunItCannotRead(t *testing.T) {
	failed := "exited at once"
	f := &File{Schema: Schema, Configs: []Config{
		{Name: "seqs-32", Error: &failed, RunDir: filepath.Join(t.TempDir(), "seqs-32")},
		{Name: "seqs-2", RunDir: filepath.Join(t.TempDir(), "gone"), Points: []Point{{Load: record.Load{Concurrency: 1}}}},
	}}
	_, err := f.JudgeRuns(&slo.Objective{Name: "o"}, false, rundir.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "seqs-2: ") {
		t.Fatalf("error %v, want one naming seqs-2", err)
	}
	if _, ok := errors.AsType[*rundir.SourceError](err); !ok {
		t.Errorf("error %v lost its reader's (%T)", err, errors.Unwrap(err))
	}
}
