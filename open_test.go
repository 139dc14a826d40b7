package servebench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestOpenRunsOptions: several runs read as one side, pooled and named
// as the command names a history id's run; warnings handed over as found,
// a damaged line refused when strict, records read from Stdin, and loads
// cut into slices of the length asked.
func TestOpenRunsOptions(t *testing.T) {
	b := servebench.Benchmark{Loads: servebench.Loads{Concurrency: []int{2}}, Options: servebench.Options{Requests: 10, NoTelemetry: true}}
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, d := range dirs {
		b.Options.OutDir = d
		if _, err := servebench.Run(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	side, err := servebench.OpenRuns(dirs, servebench.OpenOptions{Names: []string{"12", dirs[1]}})
	if err != nil {
		t.Fatal(err)
	}
	if len(side.Summary.Points) != 2 || side.Records != 20 {
		t.Errorf("two runs pooled: %d points of %d records, want 2 of 20", len(side.Summary.Points), side.Records)
	}
	one, err := servebench.Open(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := servebench.Compare(side, one, servebench.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "run 12 (" + dirs[0] + "), " + dirs[1]; c.A.Name != want || c.SameRun != "" {
		t.Errorf("side A named %q (same run: %q), want %q", c.A.Name, c.SameRun, want)
	}

	records := filepath.Join(dirs[0], "records.jsonl")
	f, err := os.OpenFile(records, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{not a record\n")
	f.Close()
	var warned []string
	res, err := servebench.OpenRuns(dirs[:1], servebench.OpenOptions{Warn: func(w string) { warned = append(warned, w) }})
	if err != nil || len(warned) != 1 || len(res.Warnings) != 0 {
		t.Errorf("a damaged line with Warn set: %v, warned %q, Result.Warnings %q; want one warning handed over", err, warned, res.Warnings)
	}
	if _, err := servebench.OpenRuns(dirs[:1], servebench.OpenOptions{Strict: true}); err == nil || !strings.Contains(err.Error(), "line 11") {
		t.Errorf("a damaged line when strict: %v, want it refused, naming the line", err)
	}

	in, err := os.Open(filepath.Join(dirs[1], "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	res, err = servebench.OpenRuns([]string{"-"}, servebench.OpenOptions{Stdin: in, Slice: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 10 || len(res.Summary.Points) != 1 || len(res.Summary.Points[0].Slices) < 2 {
		t.Errorf("records from Stdin cut into 1 ms slices: %d records, %d points; want 10 records in 1 point of slices", res.Records, len(res.Summary.Points))
	}
	if _, err := servebench.OpenRuns(dirs, servebench.OpenOptions{Names: []string{"12"}}); err == nil {
		t.Error("one name for two runs: no error")
	}
	if _, err := servebench.Open("-"); err == nil {
		t.Error(`"-" without Stdin: no error`)
	}
}
