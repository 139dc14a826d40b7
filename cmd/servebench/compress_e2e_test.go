package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCompressGzipRecords: run --compress gzip writes records.jsonl.gz (no
// records.jsonl), and report rebuilds from it the summary the run wrote,
// as it does from plain records; compare reads it too.
func TestCompressGzipRecords(t *testing.T) {
	dir := t.TempDir()
	gz, plain := filepath.Join(dir, "gz"), filepath.Join(dir, "plain")
	for _, c := range []struct {
		out   string
		extra []string
	}{{gz, []string{"--compress", "gzip"}}, {plain, nil}} {
		args := append([]string{"run", "--concurrency", "2", "--requests", "20", "--output-tokens", "16", "--out", c.out, "--no-history"}, c.extra...)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("run %v: exit %d\n%s", c.extra, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(gz, "records.jsonl")); err == nil {
		t.Error("records.jsonl written beside records.jsonl.gz")
	}
	st, err := os.Stat(filepath.Join(gz, "records.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	pst, _ := os.Stat(filepath.Join(plain, "records.jsonl"))
	if st.Size()*2 > pst.Size() {
		t.Errorf("compressed records %d bytes, plain %d", st.Size(), pst.Size())
	}
	points := func(js string) any {
		var s struct{ Points []map[string]any }
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatalf("%v: %.200s", err, js)
		}
		return s.Points
	}
	written, err := os.ReadFile(filepath.Join(gz, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "report", "--json", gz)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if !reflect.DeepEqual(points(stdout), points(string(written))) {
		t.Error("report's summary of the compressed records differs from the run's")
	}
	if code, _, stderr := run(t, "compare", plain, gz); code != 0 && code != 3 {
		t.Errorf("compare: exit %d\n%s", code, stderr)
	}
}

// TestCompressUnknownIsUsageError: --compress names what it takes.
func TestCompressUnknownIsUsageError(t *testing.T) {
	code, _, stderr := run(t, "run", "--compress", "zstd", "--requests", "1", "--no-history")
	if code != 2 || !strings.Contains(stderr, "--compress") || !strings.Contains(stderr, "zstd") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
