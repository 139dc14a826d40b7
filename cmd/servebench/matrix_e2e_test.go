package main

// End-to-end tests of the workload matrix: repeated --prompt-tokens and
// --output-tokens run the cross product as load points, against the
// built-in simulator with a few requests per point.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
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

// The run in testdata/matrix is a small recorded workload matrix against
// the built-in simulator: prompts of 64 and uniform:256,512 tokens by
// answers of 4 and 12 tokens, each at c=1 and c=2, 16 measured and one
// warm-up request per point (8 per user, so that each load is held). It
// was made with
//
//	servebench run --prompt-tokens 64 --prompt-tokens uniform:256,512 --output-tokens 4 \
//	    --output-tokens 12 --concurrency 1,2 --requests 16 --warmup 1 --no-telemetry --out testdata/matrix
//
// TestMatrixReportGolden renders it as text, Markdown and CSV, alone and
// judged by testdata/matrix-objective.yaml, which lists the four
// workloads, and compares with testdata/report/matrix-*.golden
// (-update rewrites them).
func TestMatrixReportGolden(t *testing.T) {
	for _, format := range []string{"text", "csv", "markdown"} {
		for _, verdict := range []bool{false, true} {
			name, args := "matrix-"+format, []string{"report", "--format", format}
			if verdict {
				name += "-objective"
				args = append(args, "--objective", filepath.Join("testdata", "matrix-objective.yaml"))
			}
			args = append(args, filepath.Join("testdata", "matrix"))
			t.Run(name, func(t *testing.T) { reportGolden(t, name, args...) })
		}
	}
}

// matrixReport is the part of an objective run's summary.json these tests
// read.
type matrixReport struct {
	Objective struct {
		Workloads []struct {
			PromptTokens string `json:"prompt_tokens"`
		} `json:"workloads"`
	} `json:"objective"`
	Verdict *slo.Verdict `json:"verdict"`
}

// TestMatrixObjectiveVerdictPerWorkload: an objective file listing four
// workloads judges each at its target load; one SLO no server meets fails
// every cell, and the run exits 3 naming them.
func TestMatrixObjectiveVerdictPerWorkload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	code, stdout, stderr := run(t, "run", "--objective", filepath.Join("testdata", "matrix-objective.yaml"), "--requests", "16",
		"--slo", "speed p95 >= 100000 tok/s", "--out", dir)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	rep := matrixJSON[matrixReport](t, filepath.Join(dir, "summary.json"))
	v := rep.Verdict
	skipIfMachineBehind(t, strings.Join(v.Reasons, "; "))
	if len(rep.Objective.Workloads) != 4 || v == nil || len(v.Workloads) != 4 || v.Holds {
		t.Fatalf("objective workloads %d, verdict %+v", len(rep.Objective.Workloads), v)
	}
	for i, cv := range v.Workloads {
		want := matrixCells[i]
		if cv.Workload != want || cv.TargetLoad != (record.Load{Workload: want, Concurrency: 2}) || cv.Holds || len(cv.Points) != 2 {
			t.Errorf("workload %d: %s, target %+v, holds %v, %d points", i, cv.Workload, cv.TargetLoad, cv.Holds, len(cv.Points))
		}
		if !strings.Contains(stderr, want+": speed p95") {
			t.Errorf("stderr does not name %s:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "does not hold for 4 of the 4 workloads at the target load, concurrency 2") {
		t.Errorf("verdict:\n%s", stdout)
	}
}

// matrixCells are the cells of testdata/matrix-objective.yaml.
var matrixCells = []string{"in=64 out=4", "in=64 out=12", "in=uniform:256,512 out=4", "in=uniform:256,512 out=12"}

// TestMatrixFindsCapacityPerWorkload: --find-capacity searches each
// workload on its own; the matrix's capacity is the lowest, naming its
// cell, and the long prompts reach no higher than the short ones.
func TestMatrixFindsCapacityPerWorkload(t *testing.T) {
	dir := matrixRun(t, "run", "--prompt-tokens", "64", "--prompt-tokens", "2048", "--output-tokens", "16", "--concurrency", "1",
		"--requests", "20", "--slo", "ttft p95 <= 400ms", "--find-capacity") // a p95 needs 20 requests
	v := matrixJSON[matrixReport](t, filepath.Join(dir, "summary.json")).Verdict
	if v == nil || len(v.Workloads) != 2 {
		t.Fatalf("verdict %+v", v)
	}
	short, long := v.Workloads[0].Capacity, v.Workloads[1].Capacity
	for _, c := range []slo.Capacity{short, long} {
		skipIfMachineBehind(t, c.Invalid) // a search stopped at a probe this machine could not measure
	}
	for i, c := range []slo.Capacity{short, long} {
		cell := []string{"in=64 out=16", "in=2048 out=16"}[i]
		if c.Method != "search" || !c.Found || c.Load.Workload != cell || c.Probes < 2 {
			t.Fatalf("%s: capacity %+v", cell, c)
		}
	}
	if long.Load.Concurrency > short.Load.Concurrency {
		t.Errorf("2048-token prompts reach c=%d, 64-token ones c=%d", long.Load.Concurrency, short.Load.Concurrency)
	}
	want := short.Load // the first of equals
	if long.Load.Concurrency < short.Load.Concurrency {
		want = long.Load
	}
	if *v.Capacity.Load != *want {
		t.Errorf("matrix capacity %+v, want the lower cell's, %+v", v.Capacity.Load, want)
	}
	if v.Capacity.Probes != short.Probes+long.Probes {
		t.Errorf("probes %d, want %d + %d", v.Capacity.Probes, short.Probes, long.Probes)
	}
}

// TestMatrixRepeatsEachCell: --repeat runs every load of every cell that
// many times, workload-major, and each cell's verdict pools its own repeats.
func TestMatrixRepeatsEachCell(t *testing.T) {
	dir := matrixRun(t, "run", "--prompt-tokens", "32", "--prompt-tokens", "96", "--output-tokens", "4", "--concurrency", "1",
		"--requests", "8", "--repeat", "2", "--slo", "e2e p50 <= 60s") // a p99 would need 100 requests
	run := matrixJSON[record.Run](t, filepath.Join(dir, "run.json"))
	var got []string
	for _, p := range run.Points {
		got = append(got, p.Load.Label())
	}
	want := []string{"in=32 out=4 c=1", "in=32 out=4 c=1", "in=96 out=4 c=1", "in=96 out=4 c=1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("points %q, want %q", got, want)
	}
	v := matrixJSON[matrixReport](t, filepath.Join(dir, "summary.json")).Verdict
	for _, cv := range v.Workloads {
		if len(cv.Points) != 1 || len(cv.Points[0].Points) != 2 || !cv.Holds {
			t.Errorf("%s: %d loads, first pooling %v, holds %v", cv.Workload, len(cv.Points), cv.Points[0].Points, cv.Holds)
		}
	}
}

// TestMatrixReportListsEachLoadOnce: judging a recorded matrix, the
// objective's loads are the loads measured, each once, not once per cell.
func TestMatrixReportListsEachLoadOnce(t *testing.T) {
	code, stdout, stderr := run(t, "report", "--json", "--objective", "chat", "--target-load", "2", filepath.Join("testdata", "matrix"))
	var rep struct {
		Objective struct {
			Load struct {
				Concurrency []int `json:"concurrency"`
			} `json:"load"`
		} `json:"objective"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code == 2 {
		t.Fatalf("exit %d, %v\n%s", code, err, stderr)
	}
	if got := rep.Objective.Load.Concurrency; !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("objective loads %v, want [1 2]", got)
	}
}

// TestMatrixOpenLoop: --rate crosses like --concurrency, the cap on
// every point.
func TestMatrixOpenLoop(t *testing.T) {
	dir := matrixRun(t, "run", "--output-tokens", "4", "--output-tokens", "8", "--prompt-tokens", "32", "--rate", "20,40",
		"--max-concurrency", "8", "--requests", "6")
	var got []string
	for _, p := range matrixJSON[metrics.Summary](t, filepath.Join(dir, "summary.json")).Points {
		got = append(got, p.Load.Label())
	}
	want := []string{"in=32 out=4 r=20/s ≤8", "in=32 out=4 r=40/s ≤8", "in=32 out=8 r=20/s ≤8", "in=32 out=8 r=40/s ≤8"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("points %q, want %q", got, want)
	}
}

// TestMatrixRefusesWhatCannotBeCrossed: a dataset, sessions or a
// long-context check with several lengths is a usage error before any
// load, naming the flag and what to do.
func TestMatrixRefusesWhatCannotBeCrossed(t *testing.T) {
	for _, extra := range [][]string{{"--multi-turn", "2"}, {"--long-context", "4096"}, {"--dataset", filepath.Join("testdata", "matrix-objective.yaml")}} {
		args := append([]string{"run", "--prompt-tokens", "32", "--prompt-tokens", "64", "--output-tokens", "8"}, extra...)
		code, stdout, stderr := run(t, args...)
		want := "Error: " + extra[0] + ": cannot be crossed with several --prompt-tokens or --output-tokens (a workload matrix of 2 cells); give one of each, or run each workload on its own"
		if code != 2 || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", extra, code, stderr, stdout)
		}
	}
}
