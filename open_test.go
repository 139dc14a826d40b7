package servebench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// TestOpenComparesRunDirectories: two runs written by Run read back as
// servebench report reads them, and compare as servebench compare
// compares their directories: named by directory, the same figures the
// runs returned, one directory twice is one run.
func TestOpenComparesRunDirectories(t *testing.T) {
	b := servebench.Benchmark{Loads: servebench.Loads{Concurrency: []int{4}}, Options: servebench.Options{Requests: 20, NoTelemetry: true}}
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var ran []*servebench.Result
	for _, d := range dirs {
		b.Options.OutDir = d
		res, err := servebench.Run(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		ran = append(ran, res)
	}
	var opened []*servebench.Result
	for i, d := range dirs {
		res, err := servebench.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		got, want := res.Summary.Points[0].Requests, ran[i].Summary.Points[0].Requests
		if len(res.Summary.Points) != 1 || got.Completed != want.Completed || res.Records != ran[i].Records {
			t.Errorf("%s read back: %d points, %d completed of %d records; Run returned %d completed of %d records",
				d, len(res.Summary.Points), got.Completed, res.Records, want.Completed, ran[i].Records)
		}
		if res.Interrupted || len(res.Warnings) > 0 {
			t.Errorf("%s: a finished run read as interrupted %v, with warnings %q", d, res.Interrupted, res.Warnings)
		}
		opened = append(opened, res)
	}
	c, err := servebench.Compare(opened[0], opened[1], servebench.CompareOptions{Gates: []string{"ttft p95 +1000%"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.A.Name != dirs[0] || c.B.Name != dirs[1] || c.SameRun != "" {
		t.Errorf("sides %q and %q (same run: %q), want %q and %q", c.A.Name, c.B.Name, c.SameRun, dirs[0], dirs[1])
	}
	if len(c.Points) != 1 || len(c.Gates) != 1 || !c.Controlled {
		t.Errorf("two runs of one simulator: %d points, %d gates judged, controlled %v; want 1, 1, true", len(c.Points), len(c.Gates), c.Controlled)
	}
	again, err := servebench.Open(dirs[0] + "/.")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := servebench.Compare(opened[0], again, servebench.CompareOptions{}); err != nil || !strings.HasPrefix(c.SameRun, "the same directory") {
		t.Errorf("a directory compared with itself by another name: %v, same run %q", err, c.SameRun)
	}
}

// TestOpenReadsDamagedAndKilledRuns: a damaged records line is skipped and
// named, a run that left no summary.json is read as interrupted, and a
// directory without records is an error naming it.
func TestOpenReadsDamagedAndKilledRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	b := servebench.Benchmark{Loads: servebench.Loads{Concurrency: []int{2}}, Options: servebench.Options{Requests: 10, NoTelemetry: true, OutDir: dir}}
	if _, err := servebench.Run(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "records.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{not a record\n")
	f.Close()
	if err := os.Remove(filepath.Join(dir, "summary.json")); err != nil {
		t.Fatal(err)
	}
	res, err := servebench.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "damaged line") {
		t.Errorf("warnings %q, want one naming the damaged line", res.Warnings)
	}
	if !res.Interrupted || res.Records != 10 {
		t.Errorf("a run without summary.json: interrupted %v with %d records, want true with 10", res.Interrupted, res.Records)
	}
	empty := t.TempDir()
	if _, err := servebench.Open(empty); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("a directory without records: got %v, want an error naming it", err)
	}
}
