package main

// End-to-end tests of servebench compare on the built binary: two
// simulator runs with different settings, the controlled-comparison check
// and --strict, the regression gate's exit 3, and damaged input.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// compareRuns are two simulator runs made once for these tests: A on the
// default simulated GPU, B on one with half its memory bandwidth (decode
// is bandwidth-bound: about half the speed) and a 4096-token context.
var compareRuns struct {
	once sync.Once
	a, b string
	err  string
}

func compareFixture(t *testing.T) (a, b string) {
	t.Helper()
	compareRuns.once.Do(func() {
		dir, err := os.MkdirTemp("", "servebench-compare")
		if err != nil {
			compareRuns.err = err.Error()
			return
		}
		slow := filepath.Join(dir, "slow.yaml")
		cfg := "time_scale: 4\nmodel:\n  max_model_len: 4096\ndevice:\n  mem_bandwidth_gbs: 1675\n"
		if err := os.WriteFile(slow, []byte(cfg), 0o644); err != nil {
			compareRuns.err = err.Error()
			return
		}
		fast := filepath.Join(dir, "fast.yaml")
		if err := os.WriteFile(fast, []byte("time_scale: 4\n"), 0o644); err != nil {
			compareRuns.err = err.Error()
			return
		}
		compareRuns.a, compareRuns.b = filepath.Join(dir, "a"), filepath.Join(dir, "b")
		for _, r := range []struct{ out, cfg string }{{compareRuns.a, fast}, {compareRuns.b, slow}} {
			// 96 requests a point: enough for four time slices of 24, from
			// whose spread compare judges one run against another.
			code, _, stderr := run(t, "run", "--sim-config", r.cfg, "--concurrency", "1,4", "--requests", "96",
				"--prompt-tokens", "128", "--output-tokens", "16", "--out", r.out)
			if code != 0 {
				compareRuns.err = stderr
				return
			}
		}
	})
	if compareRuns.err != "" {
		t.Fatalf("simulator runs: %s", compareRuns.err)
	}
	return compareRuns.a, compareRuns.b
}

func TestCompareSimulatorRuns(t *testing.T) {
	a, b := compareFixture(t)
	code, stdout, stderr := run(t, "compare", a, b)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"NOT A CONTROLLED COMPARISON",
		"different context length: 131072 vs 4096 — not a clean hardware comparison",
		"\nc=1   A: 96 requests, B: 96 requests (one run each)", "\nc=4   A: 96 requests, B: 96 requests (one run each)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// Half the bandwidth: decode clearly slower at every point, unless a
	// simulator fell behind its clock and widened the runs' noise band
	// past the change (the runs say so; the test skips with their words).
	for _, line := range compareLines(stdout, "speed p50") {
		if !strings.HasSuffix(line, "WORSE") {
			for _, dir := range []string{a, b} {
				if behind := simBehindWarning(t, dir); behind != "" {
					t.Skipf("speed p50 not judged worse (%q) beside a run that fell behind: %s", line, behind)
				}
			}
			t.Errorf("speed p50 not judged worse: %q", line)
		}
	}
	var r struct {
		Schema     string `json:"schema"`
		Controlled bool   `json:"controlled"`
		Points     []struct {
			Metrics []struct {
				Metric  string   `json:"metric"`
				Rel     *float64 `json:"rel"`
				Verdict string   `json:"verdict"`
			} `json:"metrics"`
		} `json:"points"`
	}
	code, stdout, stderr = run(t, "compare", "--json", a, b)
	if code != 0 || json.Unmarshal([]byte(stdout), &r) != nil {
		t.Fatalf("exit %d, JSON %q\n%s", code, stdout, stderr)
	}
	if r.Schema != "servebench.compare/v1" || r.Controlled || len(r.Points) != 2 {
		t.Fatalf("comparison: %+v", r)
	}
	for _, m := range r.Points[0].Metrics {
		// Decode is bandwidth-bound at c=1: half the bandwidth, about half the speed.
		if m.Metric == "speed p50" && (m.Rel == nil || *m.Rel > -0.35 || *m.Rel < -0.65 || m.Verdict != "worse") {
			t.Errorf("c=1 speed p50: %+v", m)
		}
	}
}

// --format html is the HTML report's page: both runs' charts overlaid and
// the comparison's tables, all in one file.
func TestCompareHTML(t *testing.T) {
	a, b := compareFixture(t)
	code, stdout, stderr := run(t, "compare", "--format", "html", a, b)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	_, data, ok := strings.Cut(stdout, `<script type="application/json" id="sb-data">`)
	data, _, ok2 := strings.Cut(data, "</script>")
	if !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !ok || !ok2 {
		t.Fatalf("not the report page:\n%.300s", stdout)
	}
	var page struct {
		Runs []struct {
			Name string `json:"name"`
		} `json:"runs"`
		Tables []struct {
			Title string     `json:"title"`
			Rows  [][]string `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(data), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 2 || page.Runs[0].Name != "A: a" || page.Runs[1].Name != "B: b" {
		t.Errorf("runs %+v", page.Runs)
	}
	if len(page.Tables) != 3 || !strings.HasPrefix(page.Tables[0].Title, "NOT A CONTROLLED COMPARISON") ||
		!strings.HasPrefix(page.Tables[1].Title, "c=1 — A: 96 requests") || len(page.Tables[2].Rows) != 14 {
		t.Errorf("tables %+v", page.Tables)
	}
}

// compareLines are the table rows of a metric, trimmed.
func compareLines(stdout, metric string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), metric+" ") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func TestCompareStrictAndGates(t *testing.T) {
	a, b := compareFixture(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"strict refuses an uncontrolled comparison", []string{"--strict", a, b}, 1,
			"Error: --strict: not a controlled comparison: different context length: 131072 vs 4096"},
		{"a run compared with itself passes strict", []string{"--strict", a, a}, 0, ""},
		{"speed fell beyond 5% and its interval", []string{"--fail-on-regression", "speed p50 -5%", a, b}, 3,
			"Error: regression: speed p50 -5% at c=1; speed p50 -5% at c=4"},
		// B is slower, not A: the other way round speed rose.
		{"the other way round nothing regressed", []string{"--fail-on-regression", "speed p50 -5%", "--fail-on-regression", "e2e p50 +20%", b, a}, 0, ""},
		{"a wrong-way threshold is a usage error", []string{"--fail-on-regression", "speed p50 +5%", a, b}, 2,
			"speed p50 gets worse when it falls, so its threshold is written -N"},
		{"one run is not a comparison", []string{a}, 2, "compare takes two runs (A, then B), got 1"},
		{"neither a run nor a history id", []string{a, filepath.Join(a, "nope")}, 2, "nope is neither a run directory nor a history id"},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, append([]string{"compare"}, tt.args...)...)
		if strings.Contains(stdout, "INCONCLUSIVE") {
			skipIfMachineBehind(t, stdout) // a point of the fixture's runs is no evidence
		}
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)\n%s", tt.name, code, tt.code, stderr, tt.want, stdout)
		}
	}
}

// A damaged records file is read as far as it is good, its bad lines
// named; a run without summary.json is compared on its records and says
// so; --strict refuses the damaged file.
func TestCompareDamagedRun(t *testing.T) {
	a, _ := compareFixture(t)
	c := filepath.Join(t.TempDir(), "c")
	if err := os.MkdirAll(c, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"run.json", "records.jsonl"} {
		data, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "records.jsonl" {
			lines := strings.SplitAfter(string(data), "\n")
			lines[2] = "{not a record\n"
			data = []byte(strings.Join(lines, "") + `{"schema":"servebench.record/v1","point":1,"lo`)
		}
		if err := os.WriteFile(filepath.Join(c, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	total := strings.Count(compareRead(t, filepath.Join(c, "records.jsonl")), "\n") + 1
	code, stdout, stderr := run(t, "compare", a, c)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	wantWarn := "skipped 2 damaged line(s), not counted: line 3, " + strconv.Itoa(total)
	if !strings.Contains(stderr, wantWarn) {
		t.Errorf("stderr lacks %q:\n%s", wantWarn, stderr)
	}
	if !strings.Contains(stdout, "has no summary.json: the run was interrupted") {
		t.Errorf("stdout does not say the summary was recomputed:\n%s", stdout)
	}
	if code, _, stderr := run(t, "compare", "--strict", a, c); code != 1 || !strings.Contains(stderr, "line 3") {
		t.Errorf("--strict on a damaged file: exit %d, %s", code, stderr)
	}
}

func compareRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Runs stored in the history are compared by their ids.
func TestCompareHistoryIDs(t *testing.T) {
	a, b := compareFixture(t)
	db := filepath.Join(t.TempDir(), "history.db")
	if code, _, stderr := run(t, "history", "import", "--db", db, a, b); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "compare", "--db", db, "1", "2")
	if code != 0 || !strings.Contains(stdout, "A: run 1 ("+a+")") || !strings.Contains(stdout, "B: run 2 ("+b+")") ||
		!strings.Contains(stdout, "different context length: 131072 vs 4096") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "compare", "--db", db, "1", "9"); code != 1 || !strings.Contains(stderr, "9") {
		t.Errorf("unknown id: exit %d\n%s", code, stderr)
	}
}
