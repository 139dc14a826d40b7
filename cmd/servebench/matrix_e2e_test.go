package main

// End-to-end tests of the workload matrix: repeated --prompt-tokens and
// --output-tokens run the cross product as load points, against the
// built-in simulator with a few requests per point.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// matrixArgs is a small matrix: two prompt lengths (one a distribution)
// by two output lengths by two concurrencies.
var matrixArgs = []string{"run", "--prompt-tokens", "64", "--prompt-tokens", "uniform:100,200",
	"--output-tokens", "8", "--output-tokens", "16", "--concurrency", "1,2", "--requests", "4", "--warmup", "1"}

// matrixRun runs args with --out in a fresh directory and returns it.
func matrixRun(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "m")
	code, stdout, stderr := run(t, append(args, "--out", dir)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	return dir
}

// matrixJSON decodes a JSON file of a run directory.
func matrixJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMatrixRunRecordsItsCells: run.json lists the cells in the order they
// ran, every point (run.json, records, summary) carries its cell, and every
// request was sized by its own cell.
func TestMatrixRunRecordsItsCells(t *testing.T) {
	dir := matrixRun(t, matrixArgs...)
	run := matrixJSON[record.Run](t, filepath.Join(dir, "run.json"))
	cells := []string{"in=64 out=8", "in=64 out=16", "in=uniform:100,200 out=8", "in=uniform:100,200 out=16"}
	if got := run.WorkloadLabels(); !reflect.DeepEqual(got, cells) {
		t.Fatalf("run.json workloads %q, want %q", got, cells)
	}
	if run.PromptTokens != "64 | uniform:100,200" || run.OutputTokens != "8 | 16" || run.Workload != nil {
		t.Errorf("run.json lengths %q %q, workload %v", run.PromptTokens, run.OutputTokens, run.Workload)
	}
	var want []record.Load
	for _, w := range cells {
		want = append(want, record.Load{Workload: w, Concurrency: 1}, record.Load{Workload: w, Concurrency: 2})
	}
	var got []record.Load
	for _, p := range run.Points {
		got = append(got, p.Load)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("run.json points %+v, want %+v", got, want)
	}
	sum := matrixJSON[metrics.Summary](t, filepath.Join(dir, "summary.json"))
	got = nil
	for _, p := range sum.Points {
		got = append(got, p.Load)
		if p.Requests.Completed != 4 {
			t.Errorf("%s: %d completed, want 4", p.Load.Label(), p.Requests.Completed)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary points %+v, want %+v", got, want)
	}
	matrixCheckRecords(t, dir, run.Workloads)
}

// matrixCheckRecords checks that each record's lengths are its cell's and
// that each point warmed up on its own.
func matrixCheckRecords(t *testing.T, dir string, cells []record.WorkloadCell) {
	t.Helper()
	byLabel := map[string]record.WorkloadCell{}
	for _, c := range cells {
		byLabel[c.Label] = c
	}
	warm := map[record.Load]int{}
	for _, r := range jsonLines[record.Record](t, filepath.Join(dir, "records.jsonl")) {
		c, ok := byLabel[r.Load.Workload]
		if !ok {
			t.Fatalf("record %d: workload %q is no cell", r.ID, r.Load.Workload)
		}
		if p := r.PromptTokensRequested; (c.PromptTokens == "64" && p != 64) || (c.PromptTokens != "64" && (p < 100 || p > 200)) {
			t.Errorf("record %d of %s: prompt of %d tokens", r.ID, r.Load.Label(), p)
		}
		if o := r.OutputTokensRequested; (c.OutputTokens == "8") != (o == 8) || (c.OutputTokens == "16") != (o == 16) {
			t.Errorf("record %d of %s: max_tokens %d", r.ID, r.Load.Label(), o)
		}
		if r.Phase == record.PhaseWarmup {
			warm[r.Load]++
		}
	}
	if len(warm) != 2*len(cells) {
		t.Errorf("warm-up at %d points, want every one of %d: %v", len(warm), 2*len(cells), warm)
	}
}

// TestMatrixIsReproducible: the same seed sends the same lengths at every
// point of every cell; another seed does not.
func TestMatrixIsReproducible(t *testing.T) {
	lengths := func(dir string) map[record.Load][]int {
		out := map[record.Load][]int{}
		for _, r := range jsonLines[record.Record](t, filepath.Join(dir, "records.jsonl")) {
			out[r.Load] = append(out[r.Load], r.PromptTokensRequested)
		}
		return out
	}
	args := []string{"run", "--prompt-tokens", "uniform:10,400", "--prompt-tokens", "normal:300,100",
		"--output-tokens", "8", "--concurrency", "1", "--requests", "6"}
	a, b := lengths(matrixRun(t, args...)), lengths(matrixRun(t, args...))
	if len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Errorf("two runs with one seed sent\n%v\n%v", a, b)
	}
	if c := lengths(matrixRun(t, append(args, "--seed", "7")...)); reflect.DeepEqual(a, c) {
		t.Errorf("seed 7 sent the lengths of seed 1: %v", c)
	}
}
