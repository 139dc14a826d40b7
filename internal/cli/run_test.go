package cli

import (
	"cmp"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

func TestRunAgainstScriptedServer(t *testing.T) {
	s := &scripted{ttft: 40 * time.Millisecond, gap: 10 * time.Millisecond, tokens: 6, prompt: 16}
	url := newScripted(t, s)
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--concurrency", "1,3", "--requests", "6", "--prompt-tokens", "16", "--output-tokens", "6",
		"--tokenizer", "cl100k_base", "--out", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var sum metrics.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("stdout is not summary JSON: %v\n%s", err, stdout)
	}
	if sum.Schema != metrics.SummarySchema || len(sum.Points) != 2 {
		t.Fatalf("schema %q, %d points", sum.Schema, len(sum.Points))
	}
	for _, p := range sum.Points {
		if p.Requests.Completed != 6 || p.Requests.Failed != 0 {
			t.Errorf("%+v: requests %+v", p.Load, p.Requests)
		}
		// The script asks for TTFT 40 ms and 5 gaps of 10 ms (TPOT 10 ms,
		// decode 100 tok/s, E2E 90 ms). A busy machine shifts what the
		// server really sends, so the client is held to the server's own
		// record: it cannot see a token before the server sent it, and it
		// must not see it much later.
		srvTTFT, srvGap := s.truth()
		between(t, "ttft p50", p.TTFT, "p50", srvTTFT, 15)
		between(t, "tpot p50", p.TPOT, "p50", srvGap, 2)
		between(t, "itl mean", p.ITL, "mean", srvGap, 2)
		if v, _ := p.TTFT.Get("min"); v < 40-0.5 {
			t.Errorf("ttft min %v below the scripted 40 ms", v)
		}
		if v, _ := p.E2E.Get("min"); v < 90-0.5 {
			t.Errorf("e2e min %v below the scripted 90 ms", v)
		}
		if p.ITL.Count != 6*5 {
			t.Errorf("itl count %d, want 30", p.ITL.Count)
		}
		if p.PromptTokensMean != 16 || p.OutputTokensMean != 6 {
			t.Errorf("token means %v %v", p.PromptTokensMean, p.OutputTokensMean)
		}
	}
	if got := sum.Points[1].ConcurrencyMax; got != 3 {
		t.Errorf("c=3 peak in flight %d", got)
	}
	// Aggregate output rate at c=3 is about three times c=1's; a busy
	// machine stretches the three parallel streams more than the single
	// one, so 1.5 is the floor: a loop that ran its users one at a time
	// would give 1.
	if r := sum.Points[1].OutputTPS / sum.Points[0].OutputTPS; r < 1.5 {
		t.Errorf("c=3/c=1 aggregate ratio %v, want about 3", r)
	}
	for _, f := range []string{"records.jsonl", "run.json", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}

	// report recomputes the same points from the records.
	code, again, stderr := runMain(t, "report", "--json", dir)
	if code != 0 {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	var rs metrics.Summary
	if err := json.Unmarshal([]byte(again), &rs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rs.Points, sum.Points) {
		t.Errorf("report differs from run's summary")
	}
	// A second run into the same directory is refused and loses nothing.
	before, _ := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	code, _, stderr = runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m", "--requests", "1",
		"--concurrency", "1", "--tokenizer", "cl100k_base", "--out", dir)
	after, _ := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if code != ExitUsage || !strings.Contains(stderr, "already holds a run") || string(before) != string(after) {
		t.Errorf("reusing --out: exit %d, stderr %q, records changed %v", code, stderr, string(before) != string(after))
	}
}

// between checks a client figure against the range of what the server
// did: not below its fastest request (the client cannot see a token before
// it is sent; 0.5 ms for clock granularity), not above its slowest by more
// than slack.
func between(t *testing.T, name string, d interface{ Get(string) (float64, bool) }, key string, want span, slack float64) {
	t.Helper()
	got, ok := d.Get(key)
	if !ok || got < want.min-0.5 || got > want.max+slack || math.IsNaN(got) {
		t.Errorf("%s = %v, want within the server's %v–%v (+%v)", name, got, want.min, want.max, slack)
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"both loops", []string{"--concurrency", "1", "--rate", "2"}, "exclusive"},
		{"bad concurrency", []string{"--concurrency", "0"}, "not a positive whole number"},
		{"bad rate", []string{"--rate", "x"}, `--rate "x": "x" is not a number of requests per second`},
		// Each bad amount is named with the value given, before any load.
		{"NaN rate", []string{"--rate", "NaN"}, `--rate "NaN": "NaN" is not a number of requests per second`},
		{"infinite rate", []string{"--rate", "1,Inf"}, `--rate "1,Inf": an infinite rate sends every request at once`},
		{"negative rate", []string{"--rate", "-2"}, `--rate "-2": "-2" is not a positive number`},
		{"huge rate", []string{"--rate", "1e12"}, `--rate "1e12": "1e12" requests per second is more than the 1000000 a run can send`},
		{"empty rate item", []string{"--rate", "1,"}, `--rate "1,": item 2 is empty`},
		{"empty concurrency item", []string{"--concurrency", "2,,4"}, `--concurrency "2,,4": item 2 is empty`},
		{"negative requests", []string{"--requests", "-1"}, "--requests -1: must not be negative"},
		{"negative duration", []string{"--duration", "-1s"}, "--duration -1s: must not be negative"},
		{"negative timeout", []string{"--timeout", "-1s"}, "Error: --timeout -1s: must not be negative\nTry: servebench run --timeout 10m"},
		{"negative first-token timeout", []string{"--first-token-timeout", "-5s"}, "--first-token-timeout -5s: must not be negative"},
		{"negative grace", []string{"--grace", "-1s"}, "--grace -1s: must not be negative"},
		{"negative cap", []string{"--rate", "1", "--max-concurrency", "-1"}, "--max-concurrency -1: must not be negative"},
		// Checked whether or not telemetry is sampled.
		{"negative sample interval", []string{"--no-telemetry", "--sample-interval", "-1s"}, "--sample-interval -1s: want a duration from 10ms to 1h"},
		{"bad dist", []string{"--prompt-tokens", "zipf:1"}, "--prompt-tokens"},
		{"cap without rate", []string{"--max-concurrency", "4"}, "use it with --rate"},
		{"unknown flag", []string{"--nope"}, "unknown flag --nope"},
		{"bad format", []string{"--format", "xml"}, "--format"},
		{"bad arrival", []string{"--rate", "1", "--arrival", "weibull"}, "--arrival"},
		{"bad api", []string{"--url", "http://127.0.0.1:1", "--api", "grpc", "--tokenizer", "cl100k_base"}, "unknown API"},
		{"stray argument", []string{"extra"}, "unexpected argument"},
		{"negative cpus", []string{"--cpus", "-1"}, "--cpus must be between 1 and the"},
		{"more cpus than the machine", []string{"--cpus", strconv.Itoa(runtime.NumCPU() + 1)}, "--cpus must be between 1 and the"},
		// bench names no flag; the CLI puts its own back.
		{"bad tokenizer", []string{"--concurrency", "1", "--requests", "1", "--tokenizer", "words"}, `Error: --tokenizer: "words": want auto, server`},
		{"bad workload", []string{"--concurrency", "1", "--requests", "1", "--think-time", "1s", "--tokenizer", "cl100k_base"}, "Error: --think-time"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, append([]string{"run"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tt.name, code, stderr, tt.want)
		}
	}
}

func TestUnknownCommandAndHelp(t *testing.T) {
	code, _, stderr := runMain(t, "bogus")
	if code != ExitUsage || !strings.Contains(stderr, "Try: servebench help") {
		t.Errorf("bogus: %d %q", code, stderr)
	}
	code, stdout, _ := runMain(t, "help")
	if code != 0 || !strings.Contains(stdout, "run") || !strings.Contains(stdout, "report") {
		t.Errorf("help: %d %q", code, stdout)
	}
}

// TestProgressOnlyOnTerminals: live progress goes to stderr when it is a
// terminal, and nowhere otherwise.
func TestProgressOnlyOnTerminals(t *testing.T) {
	s := &scripted{ttft: 5 * time.Millisecond, gap: 100 * time.Millisecond, tokens: 7, prompt: 8}
	url := newScripted(t, s)
	for _, tty := range []bool{true, false} {
		var out, errb strings.Builder
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: historyGetenv(t), StderrIsTerminal: tty}
		code := env.Main(t.Context(), []string{"run", "--url", url, "--api", "openai-completions", "--model", "m",
			"--concurrency", "2", "--requests", "2", "--prompt-tokens", "8", "--output-tokens", "7", "--tokenizer", "cl100k_base"})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		got := strings.Contains(errb.String(), "[point 1 c=2] 2/2 done")
		if got != tty {
			t.Errorf("terminal=%v: progress shown=%v, stderr %q", tty, got, errb.String())
		}
		if tty && !strings.Contains(errb.String(), "TTFT p95") {
			t.Errorf("progress lacks live TTFT: %q", errb.String())
		}
	}
}

// TestRunJSONKeepsTheWorkload: run.json records the workload beyond the
// two lengths, so a run can be reproduced from its directory.
func TestRunJSONKeepsTheWorkload(t *testing.T) {
	s := &scripted{ttft: time.Millisecond, gap: time.Millisecond, tokens: 3, prompt: 40}
	url := newScripted(t, s)
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--concurrency", "1", "--requests", "2", "--prompt-tokens", "40", "--output-tokens", "3",
		"--tokenizer", "cl100k_base", "--shared-prefix", "16", "--prefix-groups", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	var run struct {
		Workload map[string]any `json:"workload"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if run.Workload["shared_prefix"] != 16.0 || run.Workload["prefix_groups"] != 2.0 || run.Workload["prompt_tokens"] != "40" {
		t.Errorf("run.json workload: %v", run.Workload)
	}
}

// TestRunCPUs: --cpus sets the client's GOMAXPROCS for the run, run.json
// says so (the client-CPU warnings are judged by it), and the setting is
// put back after the run.
func TestRunCPUs(t *testing.T) {
	s := &scripted{ttft: time.Millisecond, gap: time.Millisecond, tokens: 3, prompt: 8}
	url := newScripted(t, s)
	before := runtime.GOMAXPROCS(0)
	for _, n := range []int{1, 0} {
		dir := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runMain(t, "run", "--url", url, "--model", "m", "--concurrency", "1", "--requests", "2",
			"--output-tokens", "3", "--tokenizer", "cl100k_base", "--cpus", strconv.Itoa(n), "--out", dir)
		if code != 0 {
			t.Fatalf("--cpus %d: exit %d\n%s", n, code, stderr)
		}
		run, err := record.ReadRun(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if want := cmp.Or(n, before); run.ClientCPUs != want {
			t.Errorf("--cpus %d: run.json client_cpus %d, want %d", n, run.ClientCPUs, want)
		}
		if got := runtime.GOMAXPROCS(0); got != before {
			t.Errorf("--cpus %d: GOMAXPROCS %d after the run, want %d as before it", n, got, before)
		}
	}
}

// TestRunRefusesAnExistingRun: a second run into the same directory is
// refused in flag terms, and the first run's files are untouched.
func TestRunRefusesAnExistingRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	args := []string{"run", "--concurrency", "1", "--requests", "1", "--output-tokens", "4", "--out", dir}
	if code, _, stderr := runMain(t, args...); code != ExitOK {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	want := "Error: --out " + dir + " already holds a run (records.jsonl)\nTry: choose another directory"
	// A usage error, said before any server is started or asked: the
	// second and third runs name a port where nothing listens.
	for _, again := range [][]string{args,
		append(slices.Clone(args), "--url", "http://127.0.0.1:1", "--model", "m", "--tokenizer", "cl100k_base"),
		append(slices.Clone(args), "--url", "http://127.0.0.1:1", "--model", "m", "--tokenizer", "cl100k_base", "--slo", "ttft p95 <= 1s"),
	} {
		code, _, stderr := runMain(t, again...)
		if code != ExitUsage || !strings.HasPrefix(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 2, %q", again, code, stderr, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "records.jsonl")); string(after) != string(before) {
		t.Error("the second run changed the first run's records")
	}
}

// TestRunEndsSayingWhereItsFilesGo: a run's last line says where its
// records and HTML report went, or, without --out, that none were kept
// and how to keep them.
func TestRunEndsSayingWhereItsFilesGo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// the default run keeps nothing
		{"no --out", nil, "no files kept: --out DIR writes the records, run.json, summary.json and the HTML report DIR/report.html"},
		// with --out, the directory and the page in it
		{"--out", []string{"--out", dir}, "2 records written to " + dir + "; HTML report " + filepath.Join(dir, "report.html")},
	} {
		args := append([]string{"run", "--concurrency", "1", "--requests", "2", "--warmup", "0", "--output-tokens", "3"}, tc.args...)
		code, _, stderr := runMain(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if got := lines[len(lines)-1]; code != ExitOK || got != tc.want {
			t.Errorf("%s: exit %d, last line %q, want %q", tc.name, code, got, tc.want)
		}
	}
}
