package main

// End-to-end tests of what a run says about itself: every request failed,
// failing is not overload, the header names the workload sent, the table's
// labels and the verdict's margins.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// clockRefusingServer lists model "m" (so the preflight passes) and
// answers every completion with status and a body echoing the request's
// Authorization header, as some gateways do in their errors.
func clockRefusingServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"no such route for %s"}}`, r.Header.Get("Authorization"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A run where every request failed used to print a table of zeros and exit
// 0, with the reason only in records.jsonl. It exits 1 after writing its
// files, marks the points in every format, and lists the errors by class
// with a sample message whose credentials are redacted.
func TestClockAllFailedRun(t *testing.T) {
	const key = "sk-clock-secret-123456"
	url := clockRefusingServer(t, http.StatusBadRequest)
	dir := filepath.Join(t.TempDir(), "r")
	base := []string{"run", "--url", url, "--model", "m", "--concurrency", "1,2", "--requests", "3", "--tokenizer", "cl100k_base"}
	env := []string{"SERVEBENCH_API_KEY=" + key}
	code, stdout, stderr := runEnv(t, env, append(base, "--out", dir)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"3 (ALL FAILED)", "Errors by class", "http_4xx 6 (c=1: 3, c=2: 3), e.g. ", "no such route for [redacted]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "every request failed (http_4xx 6)") {
		t.Errorf("stderr: %s", stderr)
	}
	if strings.Contains(stdout+stderr, key) {
		t.Errorf("the API key leaked:\n%s\n%s", stdout, stderr)
	}
	// The files are written before the exit.
	for _, f := range []string{"records.jsonl", "run.json", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if strings.Count(string(sum), `"all_failed": true`) != 2 {
		t.Errorf("summary.json does not mark both points all_failed:\n%s", sum)
	}
	for format, want := range map[string]string{"csv": ",true,http_4xx:3,", "markdown": "| 3 (ALL FAILED) |", "json": `"all_failed": true`} {
		code, out, _ := runEnv(t, env, append(base, "--format", format)...)
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("--format %s: exit %d, want 1 and %q in:\n%s", format, code, want, out)
		}
	}
}

// A wrong route is "failing", not "overloaded", in an objective run: the
// verdict says so and the exit is 1, not the objective's 3. A server
// answering 429 is overloaded.
func TestClockFailingIsNotOverload(t *testing.T) {
	args := func(url string) []string {
		return []string{"run", "--url", url, "--model", "m", "--concurrency", "2", "--requests", "12",
			"--tokenizer", "cl100k_base", "--slo", "ttft p95 <= 1s"}
	}
	code, stdout, stderr := run(t, args(clockRefusingServer(t, http.StatusNotFound))...)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout, "FAIL (failing, all failed)") || !strings.Contains(stdout, "SERVER FAILING at concurrency 2") ||
		!strings.Contains(stderr, "not overloaded") {
		t.Errorf("a 404 route is not reported as failing:\n%s\n%s", stdout, stderr)
	}
	if strings.Contains(strings.ReplaceAll(stdout+stderr, "not overloaded", ""), "overload") {
		t.Errorf("a 404 route is called overload:\n%s\n%s", stdout, stderr)
	}
	_, stdout, _ = run(t, args(clockRefusingServer(t, http.StatusTooManyRequests))...)
	if !strings.Contains(stdout, "FAIL (overloaded, all failed)") {
		t.Errorf("429 everywhere is not reported as overloaded:\n%s", stdout)
	}
}

// The header shows the workload sent: with --dataset it used to say
// "prompt 512 tok" (the flag's default) for prompts of a few tokens.
func TestClockHeaderShowsWorkloadSent(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "short.jsonl")
	if err := os.WriteFile(ds, []byte("{\"prompt\": \"hello there\", \"output_tokens\": 20}\n{\"prompt\": \"what is two and two\", \"output_tokens\": 20}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "run", "--dataset", ds, "--concurrency", "1", "--requests", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	head := strings.SplitN(stdout, "\n", 2)[0]
	if strings.Contains(head, "prompt 512 tok") || !strings.Contains(head, "dataset "+ds) || !strings.Contains(head, "output 20 tok (means sent)") {
		t.Errorf("header does not show the dataset and its measured lengths:\n%s", head)
	}
	// Chat-templated prompts of a few words: far below the flag default.
	var prompt int
	if i := strings.Index(head, " · prompt "); i < 0 {
		t.Fatalf("no prompt length in %q", head)
	} else if _, err := fmt.Sscanf(head[i+len(" · prompt "):], "%d tok", &prompt); err != nil || prompt < 2 || prompt > 60 {
		t.Errorf("prompt mean %d (%v) in %q, want the dataset's few tokens", prompt, err, head)
	}
}

// inFlight is the note a load cell carries when its point did not hold
// its load.
var inFlight = regexp.MustCompile(` \([0-9.]+ in flight\)`)

// The table names per-request speed as SLOs do ("speed p95"), shows ITL
// p99 beside p95 and a prefill column. Telemetry is off: a KV cache column
// appears whenever a sample falls within the point's short window, which
// depends on the machine's load.
func TestClockTableLabels(t *testing.T) {
	code, stdout, stderr := run(t, "run", "--concurrency", "1", "--requests", "4", "--output-tokens", "16", "--no-telemetry")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// The table's heading is the first line that starts with "load": a
	// loaded host's warning (the simulator behind its clock) may come first.
	lines := strings.Split(stdout, "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "load ") })
	if h < 0 || len(lines) < h+3 {
		t.Fatalf("no table:\n%s", stdout)
	}
	lines = lines[h:]
	groups, stats := strings.Fields(lines[0]), strings.Fields(lines[1])
	wantGroups := "load speed tok/s/req output tok/s prompt/TTFT tok/s TTFT ms ITL ms E2E ms req/min ok errors"
	wantStats := "p50 p95 aggregate p50 p50 p95 p99 p95 p99 p95 p99"
	if strings.Join(groups, " ") != wantGroups || strings.Join(stats, " ") != wantStats {
		t.Errorf("table heading:\n%s\n%s\nwant groups %q, stats %q", lines[0], lines[1], wantGroups, wantStats)
	}
	// On a loaded machine the one user may not hold its load: the load
	// cell then says "c=1 (0.9 in flight)", one cell of three words.
	row := strings.Fields(inFlight.ReplaceAllString(lines[2], ""))
	if len(row) != 15 || row[0] != "c=1" {
		t.Errorf("row %q: want 15 cells", lines[2])
	}
}

// report --objective warns when the recorded workload is not the
// objective's, in text and on the page, and stays quiet when it is.
func TestClockReportObjectiveWorkloadWarning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if code, _, stderr := run(t, "run", "--concurrency", "1", "--requests", "4", "--output-tokens", "16", "--out", dir); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	_, stdout, _ := run(t, "report", "--objective", "chat", dir)
	if !strings.Contains(stdout, "the recorded workload differs from objective chat's: prompt_tokens 512 (the objective's: lognormal:1024,768,32,8192), output_tokens 16") {
		t.Errorf("no workload warning:\n%s", stdout)
	}
	// The page judges as the text does, warning and all.
	if _, page, _ := run(t, "report", "--objective", "chat", "--format", "html", dir); !strings.Contains(page, "the recorded workload differs from objective chat") {
		t.Errorf("no workload warning on the page")
	}
	same := filepath.Join(t.TempDir(), "s")
	run(t, "run", "--objective", "chat", "--concurrency", "1", "--requests", "3", "--out", same)
	_, stdout, _ = run(t, "report", "--objective", "chat", same)
	if strings.Contains(stdout, "workload differs") {
		t.Errorf("warning on the objective's own workload:\n%s", stdout)
	}
	_, stdout, _ = run(t, "report", "--objective", "coding", same)
	if !strings.Contains(stdout, "differs from objective coding's") {
		t.Errorf("no warning for another objective's workload:\n%s", stdout)
	}
}

// Verdict margins read alike: measured ÷ target for every SLO, never a
// percentage next to a multiple.
func TestClockVerdictMargins(t *testing.T) {
	_, stdout, _ := run(t, "run", "--concurrency", "1", "--requests", "4", "--output-tokens", "16",
		"--slo", "ttft p95 <= 1s", "--slo", "speed p95 >= 10 tok/s", "--slo", "error_rate <= 0.1%")
	i := strings.Index(stdout, "Objective ")
	if i < 0 {
		t.Fatalf("no verdict:\n%s", stdout)
	}
	v := stdout[i:]
	row := ""
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(l, "c=1") {
			row = l
		}
	}
	if strings.Count(row, "×") != 3 || strings.Contains(row, "%×") || strings.ContainsAny(strings.ReplaceAll(row, "0%", ""), "+") {
		t.Errorf("margins do not read alike: %q", row)
	}
	if !strings.Contains(v, "N× is the measured value ÷ the SLO's target") {
		t.Errorf("no legend:\n%s", v)
	}
}
