package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/rundir"
)

// writeRun writes e as the run directory dir: run.json and summary.json.
func writeRun(t *testing.T, dir string, e *Entry) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{rundir.RunFile: e.Run, rundir.SummaryFile: &metrics.Summary{Run: e.Run, Points: e.Points}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestImportAll: a folder of runs is imported run by run, each outcome
// handed over; a directory that cannot be read is counted and passed, and
// a database that cannot be written stops the import, saying how far it
// came.
func TestImportAll(t *testing.T) {
	root := t.TempDir()
	runs := filepath.Join(root, "runs")
	writeRun(t, filepath.Join(runs, "a"), testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m"))
	writeRun(t, filepath.Join(runs, "b"), testEntry("2026-12-01T08:00:00Z", "builtin:sim", "m"))
	missing := filepath.Join(root, "missing")
	path := filepath.Join(root, "h.db")
	db := open(t, path)
	var got []string
	each := func(dir string, id int64, replaced bool, err error) {
		got = append(got, filepath.Base(dir)+" "+map[bool]string{false: "new", true: "again"}[replaced]+" "+map[bool]string{false: "ok", true: "failed"}[err != nil])
	}
	ctx := context.Background()
	failed, total, err := db.ImportAll(ctx, []string{runs, missing, filepath.Join(runs, "a")}, rundir.Options{}, each)
	want := []string{"a new ok", "b new ok", "missing new failed", "a again ok"}
	if err != nil || failed != 1 || total != 4 || strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("ImportAll: %d failed of %d, %v, outcomes %q; want 1 of 4, nil, %q", failed, total, err, got, want)
	}

	ro, err := Open(ctx, path, Options{ReadOnly: true, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got = nil
	_, total, err = ro.ImportAll(ctx, []string{runs}, rundir.Options{}, each)
	if _, ok := errors.AsType[*PutError](err); !ok || total != 2 || len(got) != 0 || !strings.Contains(err.Error(), "0 of 2 run directories were imported before it failed") {
		t.Errorf("a database that cannot be written: %v (%d directories, outcomes %q); want a PutError saying 0 of 2 were imported", err, total, got)
	}
}
