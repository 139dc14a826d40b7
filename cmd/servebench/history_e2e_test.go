package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/store"
)

// historyRunDir makes one small simulator run in dir, stored in no
// history.
func historyRunDir(t *testing.T, dir string) {
	t.Helper()
	code, _, stderr := run(t, "run", "--concurrency", "1,2", "--requests", "4", "--output-tokens", "16", "--prompt-tokens", "64", "--out", dir, "--no-history")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
}

// historyCopies copies the run in src n times under root, each a run of
// its own (its start moved by i seconds), and returns their directories.
func historyCopies(t *testing.T, src, root string, n int) []string {
	t.Helper()
	var raw map[string]any
	b, err := os.ReadFile(filepath.Join(src, "run.json"))
	if err != nil || json.Unmarshal(b, &raw) != nil {
		t.Fatalf("run.json: %v", err)
	}
	started, _ := time.Parse(time.RFC3339Nano, raw["started"].(string))
	var dirs []string
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("run%02d", i))
		os.MkdirAll(dir, 0o755)
		for _, f := range []string{"records.jsonl", "summary.json", "telemetry.jsonl"} {
			if b, err := os.ReadFile(filepath.Join(src, f)); err == nil {
				os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
		}
		raw["started"] = started.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		b, _ := json.Marshal(raw)
		os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
		dirs = append(dirs, dir)
	}
	return dirs
}

func historyList(t *testing.T, db string, args ...string) []store.Run {
	t.Helper()
	code, stdout, stderr := run(t, append([]string{"history", "--json", "--limit", "0", "--db", db}, args...)...)
	if code != 0 {
		t.Fatalf("history: exit %d\n%s", code, stderr)
	}
	var runs []store.Run
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil {
		t.Fatalf("history --json: %v\n%s", err, stdout)
	}
	return runs
}

// Two servebench processes importing into one database at once, partly
// the same directories, store every run once and leave the database whole.
func TestHistoryTwoProcessesAtOnce(t *testing.T) {
	root := t.TempDir()
	historyRunDir(t, filepath.Join(root, "src"))
	dirs := historyCopies(t, filepath.Join(root, "src"), filepath.Join(root, "runs"), 24)
	db := filepath.Join(root, "history.db")
	// Each process imports 16 directories: 8 of its own and the 8 shared.
	halves := [][]string{append(dirs[:8:8], dirs[16:]...), append(dirs[8:16:16], dirs[16:]...)}
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for i, h := range halves {
		wg.Go(func() {
			var out bytes.Buffer
			cmd := exec.Command(binary, append([]string{"history", "import", "--db", db}, h...)...)
			cmd.Stdout, cmd.Stderr = &out, &out
			errs[i] = cmd.Run()
			outs[i] = out.String()
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	runs := historyList(t, db)
	seen := map[string]bool{}
	for _, r := range runs {
		seen[r.Dir] = true
	}
	if len(runs) != len(dirs) || len(seen) != len(dirs) {
		t.Fatalf("%d runs stored (%d directories), want %d", len(runs), len(seen), len(dirs))
	}
	historySQL(t, db, func(sdb *sql.DB) {
		var ok string
		if err := sdb.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("integrity check: %q %v", ok, err)
		}
	})
}

// historySQL opens the database file itself, beside servebench.
func historySQL(t *testing.T, path string, f func(*sql.DB)) {
	t.Helper()
	sdb, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	f(sdb)
}

// Two runs finishing at once, each its own process, are both stored in
// the default history ($XDG_DATA_HOME), with ids of their own.
func TestHistoryTwoRunsAtOnce(t *testing.T) {
	data := t.TempDir()
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range 2 {
		wg.Go(func() {
			cmd := exec.Command(binary, "run", "--concurrency", "2", "--requests", "4", "--output-tokens", "16", "--label", fmt.Sprintf("worker=%d", i))
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data)
			out, _ := cmd.CombinedOutput()
			outs[i] = string(out)
		})
	}
	wg.Wait()
	runs := historyList(t, filepath.Join(data, "servebench", "history.db"))
	if len(runs) != 2 || runs[0].ID == runs[1].ID || runs[0].Labels["worker"] == runs[1].Labels["worker"] {
		t.Fatalf("runs stored: %+v\n%s\n%s", runs, outs[0], outs[1])
	}
	for i, out := range outs {
		if !strings.Contains(out, "stored in history as run ") {
			t.Errorf("process %d does not say its id:\n%s", i, out)
		}
	}
}

// Filters select by target, model, label and date, and --json prints the
// fields docs/OUTPUT.md lists.
func TestHistoryFilters(t *testing.T) {
	root := t.TempDir()
	db := filepath.Join(root, "history.db")
	for _, l := range []string{"gpu=L4", "gpu=H100"} {
		code, _, stderr := run(t, "run", "--concurrency", "1", "--requests", "2", "--output-tokens", "8", "--db", db, "--label", l)
		if code != 0 {
			t.Fatal(stderr)
		}
	}
	tomorrow := time.Now().AddDate(0, 0, 1).Format(time.DateOnly)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"--label", "gpu=L4"}, 1},
		{[]string{"--label", "gpu=L4", "--label", "gpu=H100"}, 1}, // the later value of a key wins
		{[]string{"--target", "builtin:sim"}, 2},
		{[]string{"--target", "http://"}, 0},
		{[]string{"--model", "SIM-LLAMA"}, 2},
		{[]string{"--since", "1h"}, 2},
		{[]string{"--since", tomorrow}, 0},
		{[]string{"--until", "2000-01-01"}, 0},
		{[]string{"--limit", "1"}, 1},
	} {
		if got := historyList(t, db, tc.args...); len(got) != tc.want {
			t.Errorf("history %v: %d runs, want %d", tc.args, len(got), tc.want)
		}
	}
	_, stdout, _ := run(t, "history", "--json", "--db", db, "--limit", "1")
	var raw []map[string]any
	json.Unmarshal([]byte(stdout), &raw)
	for _, k := range []string{"id", "started", "ended", "stored", "tool_version", "target", "api", "model", "simulated", "server",
		"labels", "workload_hash", "holds", "interrupted", "flags", "points"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("history --json has no %q: %s", k, stdout)
		}
	}
}

// A database from a newer servebench: history refuses it (exit 1, one
// clear line), and a run still succeeds, warns, and leaves the file as it
// was.
func TestHistoryNewerDatabase(t *testing.T) {
	root := t.TempDir()
	db := filepath.Join(root, "history.db")
	if code, _, stderr := run(t, "run", "--concurrency", "1", "--requests", "2", "--output-tokens", "8", "--db", db); code != 0 {
		t.Fatal(stderr)
	}
	historySQL(t, db, func(sdb *sql.DB) {
		if _, err := sdb.Exec(`PRAGMA user_version = 99`); err != nil {
			t.Fatal(err)
		}
	})
	before, _ := os.ReadFile(db)
	code, _, stderr := run(t, "history", "--db", db)
	if code != 1 || !strings.Contains(stderr, "was written by a newer servebench (schema 99; this one knows up to") {
		t.Errorf("history on a newer database: exit %d\n%s", code, stderr)
	}
	dir := filepath.Join(root, "a")
	code, _, stderr = run(t, "run", "--concurrency", "1", "--requests", "2", "--output-tokens", "8", "--db", db, "--out", dir)
	if code != 0 || !strings.Contains(stderr, "warning: the run was not stored in history") {
		t.Errorf("run with a newer database: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("the run's summary: %v", err)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("the newer database was changed")
	}
}
