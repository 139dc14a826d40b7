package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/store"
)

// historyDirs holds each test's data directory, so that the commands a
// test runs share one history, as a user's do.
var historyDirs sync.Map // *testing.T → string

// historyGetenv is an empty environment but for XDG_DATA_HOME, a
// directory of the test's own: a test's runs are stored there, never in
// the home directory of whoever runs the tests.
func historyGetenv(t *testing.T) func(string) string {
	d, ok := historyDirs.Load(t)
	if !ok {
		d, _ = historyDirs.LoadOrStore(t, t.TempDir())
		t.Cleanup(func() { historyDirs.Delete(t) })
	}
	dir := d.(string)
	return func(k string) string {
		if k == "XDG_DATA_HOME" {
			return dir
		}
		return ""
	}
}

// historyEnv runs command lines in one environment, so that they share
// its history.
type historyEnv struct {
	t      *testing.T
	getenv func(string) string
}

func newHistoryEnv(t *testing.T) *historyEnv { return &historyEnv{t, historyGetenv(t)} }

func (h *historyEnv) run(args ...string) (int, string, string) {
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: h.getenv}
	code := env.Main(h.t.Context(), args)
	return code, out.String(), errb.String()
}

// db is where this environment keeps its history.
func (h *historyEnv) db() string {
	return filepath.Join(h.getenv("XDG_DATA_HOME"), "servebench", store.FileName)
}

// quickRun is a simulator run of two small points, with --out dir.
func (h *historyEnv) quickRun(dir string, extra ...string) string {
	h.t.Helper()
	args := append([]string{"run", "--concurrency", "1,2", "--requests", "4", "--output-tokens", "16", "--prompt-tokens", "64", "--out", dir}, extra...)
	code, _, stderr := h.run(args...)
	if machineBehind(code, stderr) {
		h.t.Skipf("this machine could not keep up: %s", stderr)
	}
	if code != 0 {
		h.t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	return stderr
}

func (h *historyEnv) list(args ...string) []store.Run {
	h.t.Helper()
	code, stdout, stderr := h.run(append([]string{"history", "--json"}, args...)...)
	if code != 0 {
		h.t.Fatalf("history: exit %d\n%s", code, stderr)
	}
	var runs []store.Run
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil {
		h.t.Fatalf("history --json: %v\n%s", err, stdout)
	}
	return runs
}

// A run stores itself with its labels, command line and directory, and
// importing its directory afterwards finds it there: one run, one id.
func TestRunStoresItsHistory(t *testing.T) {
	h := newHistoryEnv(t)
	dir := filepath.Join(t.TempDir(), "a")
	stderr := h.quickRun(dir, "--label", "team=infra", "--header", "X-Api-Key: secret-value-123")
	if !strings.Contains(stderr, "stored in history as run 1") {
		t.Fatalf("stderr does not give the run's id:\n%s", stderr)
	}
	runs := h.list()
	abs, _ := filepath.Abs(dir)
	if len(runs) != 1 || runs[0].Dir != abs || runs[0].Labels["team"] != "infra" || len(runs[0].Points) != 2 || runs[0].Target != "builtin:sim" {
		t.Fatalf("history after one run: %+v", runs)
	}
	if flags := strings.Join(runs[0].Flags, " "); !strings.Contains(flags, "--label team=infra") || strings.Contains(flags, "secret-value-123") {
		t.Errorf("flags stored: %q (want the command line, credentials redacted)", flags)
	}
	code, stdout, stderr := h.run("history", "import", dir)
	if code != 0 || !strings.Contains(stdout, "run 1: "+dir+" (already in history, updated)") {
		t.Fatalf("import of a stored run: exit %d\n%s%s", code, stdout, stderr)
	}
	again := h.list()
	if len(again) != 1 || again[0].ID != 1 || again[0].WorkloadHash != runs[0].WorkloadHash {
		t.Errorf("after import: %+v, want run 1 alone with workload hash %s", again, runs[0].WorkloadHash)
	}
}

// --no-history stores nothing and creates no database.
func TestRunNoHistory(t *testing.T) {
	h := newHistoryEnv(t)
	stderr := h.quickRun(filepath.Join(t.TempDir(), "a"), "--no-history")
	if strings.Contains(stderr, "history") {
		t.Errorf("stderr mentions the history: %s", stderr)
	}
	if _, err := os.Stat(h.db()); !os.IsNotExist(err) {
		t.Errorf("a database was created: %v", err)
	}
}

// A history that cannot be written (corrupt, newer, locked) is a warning
// after the run: the run succeeds, its directory is complete, and the
// warning says how to add it later.
func TestRunHistoryFailureIsAWarning(t *testing.T) {
	h := newHistoryEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.db")
	garbage := bytes.Repeat([]byte("garbage "), 1000)
	os.WriteFile(bad, garbage, 0o644)
	dir := filepath.Join(t.TempDir(), "a")
	stderr := h.quickRun(dir, "--db", bad)
	if !strings.Contains(stderr, "warning: the run was not stored in history: history database "+bad) ||
		!strings.Contains(stderr, "servebench history import "+dir+" adds it later") {
		t.Errorf("stderr:\n%s", stderr)
	}
	for _, f := range []string{rundir.RecordsFile, rundir.RunFile, rundir.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the run's %s: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(bad); !bytes.Equal(b, garbage) {
		t.Error("the damaged database was rewritten")
	}
}

// Bad history arguments are usage errors naming the flag and the form
// wanted; a missing run is a failure naming the id.
func TestHistoryBadInput(t *testing.T) {
	h := newHistoryEnv(t)
	h.quickRun(filepath.Join(t.TempDir(), "a"))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"history", "--since", "yesterday"}, ExitUsage, `--since wants a date (2026-12-01), a time (2026-12-01T07:00, or RFC 3339) or an age (24h, 7d), got "yesterday"`},
		{[]string{"history", "--until", "2026-02-30"}, ExitUsage, "--until wants a date"},
		{[]string{"history", "--label", "gpu"}, ExitUsage, "--label wants KEY=VALUE, such as gpu=L4"},
		{[]string{"history", "--limit", "-1"}, ExitUsage, "--limit wants a whole number, 0 or more"},
		{[]string{"history", "runs/a"}, ExitUsage, `unexpected argument "runs/a"`},
		{[]string{"run", "--label", "=x"}, ExitUsage, "--label wants KEY=VALUE"},
		{[]string{"history", "show"}, ExitUsage, "history show wants one run id"},
		{[]string{"history", "show", "abc"}, ExitUsage, `want a run id such as 12, got "abc"`},
		{[]string{"history", "show", "99"}, ExitFailure, "no such run 99 in history database " + h.db()},
		{[]string{"history", "import"}, ExitUsage, "history import wants run directories"},
		{[]string{"history", "import", "/nonexistent/run"}, ExitFailure, "Error: /nonexistent/run: no run.json: not a run directory"},
	} {
		code, _, stderr := h.run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// An empty history is said once on stderr, not an error.
func TestHistoryEmpty(t *testing.T) {
	h := newHistoryEnv(t)
	code, stdout, stderr := h.run("history")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no run stored yet: "+h.db()+" does not exist") {
		t.Errorf("empty history: exit %d, %q, %q", code, stdout, stderr)
	}
	if _, err := os.Stat(h.db()); !os.IsNotExist(err) {
		t.Error("listing created the database")
	}
}

// import rebuilds the history from run directories: a folder of runs, a
// run killed before its summary (rebuilt from its records, with a
// warning), a damaged summary likewise, a damaged run.json taken from
// summary.json as report takes it; a directory that is no run is named,
// and the others are still imported.
func TestHistoryImport(t *testing.T) {
	h := newHistoryEnv(t)
	root := t.TempDir()
	for _, name := range []string{"a", "killed", "damaged", "badrun"} {
		h.quickRun(filepath.Join(root, name), "--no-history")
	}
	os.Remove(filepath.Join(root, "killed", rundir.SummaryFile))
	os.WriteFile(filepath.Join(root, "damaged", rundir.SummaryFile), []byte(`{"schema": "servebench.summ`), 0o644)
	os.WriteFile(filepath.Join(root, "badrun", rundir.RunFile), []byte(`{"schema":"servebench.run/v1","tar`), 0o644)
	os.Mkdir(filepath.Join(root, "empty"), 0o755)
	code, stdout, stderr := h.run("history", "import", root, filepath.Join(root, "empty"))
	if code != ExitFailure || !strings.Contains(stderr, "1 of 5 run directories were not imported") ||
		!strings.Contains(stderr, "Error: "+filepath.Join(root, "empty")+": no run.json") {
		t.Errorf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"killed has no summary.json (the run was killed): stored from the summary rebuilt from its records",
		"damaged/summary.json is damaged",
		"warning: " + filepath.Join(root, "badrun", "run.json") + " is damaged: unexpected end of JSON input: the run is taken from summary.json instead"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	runs := h.list()
	if len(runs) != 4 {
		t.Fatalf("%d runs imported, want 4: %+v", len(runs), runs)
	}
	for _, r := range runs {
		if len(r.Points) != 2 || r.Points[1].Completed != 4 {
			t.Errorf("run %s: points %+v", r.Dir, r.Points)
		}
		if killed := strings.HasSuffix(r.Dir, "killed"); r.Interrupted != killed {
			t.Errorf("run %s: interrupted %v", r.Dir, r.Interrupted)
		}
	}
	code, stdout, _ = h.run("history", "import", root)
	if code != 0 || strings.Count(stdout, "(already in history, updated)") != 4 || len(h.list()) != 4 {
		t.Errorf("second import: exit %d\n%s", code, stdout)
	}
}

// RunDir takes a directory as it is and a history id to its directory;
// ids that are unknown, or of a run made without --out, say so.
func TestResolveRun(t *testing.T) {
	h := newHistoryEnv(t)
	dir := filepath.Join(t.TempDir(), "a")
	h.quickRun(dir)
	if code, _, stderr := h.run("run", "--concurrency", "1", "--requests", "2", "--output-tokens", "8"); code != 0 {
		t.Fatal(stderr)
	}
	env := &Env{Stderr: &strings.Builder{}, Getenv: h.getenv}
	abs, _ := filepath.Abs(dir)
	for _, tc := range []struct{ arg, want, err string }{
		{dir, dir, ""},
		{"1", abs, ""},
		{"#1", abs, ""},
		{"2", "", "run 2 was made without --out"},
		{"7", "", "no such run 7"},
		{"runs/none", "", "runs/none is neither a run directory nor a history id"},
	} {
		got, err := resolveRun(t.Context(), env, "", tc.arg)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("resolveRun(%q) = %q, %v; want %q, %q", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

// show prints the run's context and a row per point; --json the whole
// run, each point's summary included.
func TestHistoryShow(t *testing.T) {
	h := newHistoryEnv(t)
	dir := filepath.Join(t.TempDir(), "a")
	// a p50: 8 requests per user are enough for it (a p95 would need 20)
	h.quickRun(dir, "--slo", "ttft p50 <= 10s", "--label", "gpu=H100")
	code, stdout, stderr := h.run("history", "show", "1")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"run 1 · started ", "target builtin:sim (openai-chat) · model sim-llama-3.1-8b · server: servebench-sim",
		"labels gpu=H100, model=sim-llama-3.1-8b", "workload sha256:", `"prompt_tokens":"64"`, "objective command-line: holds (sha256:", "holds at the target load", "--slo 'ttft p50 <= 10s'",
		"command servebench run --concurrency 1,2", "directory ", "load  ok  errors", "c=2   16       0", "pass"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show does not print %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = h.run("history", "show", "1", "--json")
	var d struct {
		Objective struct{ Name string }
		RunJSON   struct{ Started string } `json:"run"`
		Points    []struct {
			Summary struct {
				OutputTPS float64 `json:"output_tps"`
			}
			Verdict struct{ Pass bool }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil || len(d.Points) != 2 || d.Points[1].Summary.OutputTPS <= 0 || !d.Points[1].Verdict.Pass || d.RunJSON.Started == "" || d.Objective.Name != "command-line" {
		t.Errorf("show --json (%v):\n%s", err, stdout)
	}
}
