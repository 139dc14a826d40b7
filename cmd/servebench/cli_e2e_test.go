package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// cliHoldServer streams `first` tokens of each answer at once, then holds
// the answer until release is closed (it then finishes it) or the client
// gives up. It counts the requests it holds.
type cliHoldServer struct {
	first   int
	release chan struct{}
	held    atomic.Int64
}

func newCLIHoldServer(first int) *cliHoldServer {
	return &cliHoldServer{first: first, release: make(chan struct{})}
}

func (s *cliHoldServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/completions") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range s.first {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t%d\"}]}\n\n", i)
	}
	w.(http.Flusher).Flush()
	s.held.Add(1)
	defer s.held.Add(-1)
	select {
	case <-s.release:
	case <-r.Context().Done():
		return
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" end\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.first+1)
}

// cliStart starts a closed-loop run of 4 users against url, writing to dir.
func cliStart(t *testing.T, url, dir string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	args := append([]string{"run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--concurrency", "4", "--requests", "10000", "--prompt-tokens", "8", "--output-tokens", "5",
		"--tokenizer", "cl100k_base", "--out", dir}, extra...)
	cmd := exec.Command(binary, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &errb
}

// cliWaitHeld waits until the server holds n requests.
func cliWaitHeld(t *testing.T, s *cliHoldServer, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.held.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d requests after 20s, want %d", s.held.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cliExitCode waits for cmd and returns its exit code.
func cliExitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// cliRecords reads a records file strictly.
func cliRecords(t *testing.T, path string) []record.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Record
	rd := record.NewReader(f)
	for rd.Next() {
		out = append(out, *rd.Record())
	}
	if err := rd.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// cliClasses counts records by outcome: "ok" or the error class.
func cliClasses(recs []record.Record) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		if r.Error == nil {
			m["ok"]++
		} else {
			m[r.Error.Class]++
		}
	}
	return m
}

// TestCLIInterruptOnce: one Ctrl-C stops sending; the 4 requests in flight
// finish when the server answers within --grace, and are written as
// cancelled (with the chunks they had) when the grace runs out. Either way
// the summary is written and the exit code is 130.
func TestCLIInterruptOnce(t *testing.T) {
	tests := []struct {
		name    string
		grace   string
		release bool // the server finishes the held answers 300 ms after the signal
		want    map[string]int
		minWait time.Duration
	}{
		{"finish within grace", "30s", true, map[string]int{"ok": 4}, 300 * time.Millisecond},
		{"cancelled after grace", "500ms", false, map[string]int{"cancelled": 4}, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newCLIHoldServer(2)
			srv := httptest.NewServer(s)
			defer srv.Close()
			dir := filepath.Join(t.TempDir(), "r")
			cmd, out := cliStart(t, srv.URL, dir, "--grace", tt.grace)
			cliWaitHeld(t, s, 4)
			start := time.Now()
			cmd.Process.Signal(syscall.SIGINT)
			if tt.release {
				time.Sleep(300 * time.Millisecond)
				close(s.release)
			}
			if code := cliExitCode(t, cmd); code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, out)
			}
			if el := time.Since(start); el < tt.minWait || el > 10*time.Second {
				t.Errorf("exited %v after the signal, want at least %v", el, tt.minWait)
			}
			for _, msg := range []string{"stopping: nothing new is started", "Error: interrupted: the summary covers the requests that completed"} {
				if !strings.Contains(out.String(), msg) {
					t.Errorf("output lacks %q:\n%s", msg, out)
				}
			}
			recs := cliRecords(t, filepath.Join(dir, "records.jsonl"))
			if got := cliClasses(recs); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("records by outcome: %v, want %v", got, tt.want)
			}
			for _, r := range recs {
				if n := len(r.Chunks); n < 2 {
					t.Errorf("record %d kept %d chunks, want at least the 2 received", r.ID, n)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil || !bytes.Contains(b, []byte(`"interrupted": true`)) {
				t.Errorf("summary.json after one interrupt: %v\n%s", err, b)
			}
		})
	}
}

// TestCLIInterruptTwice: a second Ctrl-C does not wait for the grace: each
// request in flight is written as a cancelled record with its partial
// chunks, within a second, and run.json is there. Nothing had completed,
// so before this the records file was empty.
func TestCLIInterruptTwice(t *testing.T) {
	tests := []struct {
		name string
		load []string // cliStart's closed loop of 4 users, or an open loop
	}{
		{"closed loop", nil},
		// An open loop keeps sending until the signal: as many records as
		// the server saw requests.
		{"open loop", []string{"--concurrency", "", "--rate", "40"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newCLIHoldServer(2)
			srv := httptest.NewServer(s)
			defer srv.Close()
			dir := filepath.Join(t.TempDir(), "r")
			cmd, out := cliStart(t, srv.URL, dir, append([]string{"--grace", "1m"}, tt.load...)...)
			cliWaitHeld(t, s, 4)
			cmd.Process.Signal(syscall.SIGINT)
			time.Sleep(100 * time.Millisecond)
			held := int(s.held.Load()) // nothing new is sent after the first signal
			start := time.Now()
			cmd.Process.Signal(syscall.SIGINT)
			code := cliExitCode(t, cmd)
			el := time.Since(start)
			if code != 130 {
				t.Errorf("exit %d, want 130\n%s", code, out)
			}
			// One second as promised, with slack for a loaded test machine.
			if el > 1500*time.Millisecond {
				t.Errorf("exited %v after the second signal, want within 1s", el)
			}
			t.Logf("exited %v after the second signal, %d requests in flight", el, held)
			for _, msg := range []string{"stopping: nothing new is started", "cancelling the requests in flight",
				fmt.Sprintf("%d records written to %s", held, dir)} {
				if !strings.Contains(out.String(), msg) {
					t.Errorf("output lacks %q:\n%s", msg, out)
				}
			}
			recs := cliRecords(t, filepath.Join(dir, "records.jsonl"))
			if got := cliClasses(recs); got["cancelled"] != held || len(recs) != held {
				t.Errorf("records by outcome: %v, want %d cancelled", got, held)
			}
			for _, r := range recs {
				if len(r.Chunks) != 2 || r.FirstTokenNS == 0 {
					t.Errorf("record %d: %d chunks, first token at %d; want the 2 chunks received", r.ID, len(r.Chunks), r.FirstTokenNS)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "run.json"))
			if err != nil || !bytes.Contains(b, []byte(`"model": "m"`)) {
				t.Errorf("run.json after a second interrupt: %v\n%s", err, b)
			}
		})
	}
}

// TestCLIKilledRunReport: a run killed mid-way keeps its run.json header
// (written at the start); a truncated last line, what a crash leaves, is
// skipped with a warning naming it; the report says the run was
// interrupted; --strict refuses the file.
func TestCLIKilledRunReport(t *testing.T) {
	s := &slowServer{gap: 2 * time.Millisecond, tokens: 3}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	cmd, _ := cliStart(t, srv.URL, dir)
	path := filepath.Join(dir, "records.jsonl")
	waitRecords(t, path, 8)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Fatal("a killed run wrote summary.json")
	}
	// The kill may land in the middle of a write and leave a torn line of
	// its own: keep the whole lines, then tear one as a crash does.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:bytes.LastIndexByte(b, '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	good := len(cliRecords(t, path))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schema":"servebench.record/v1","point":0,"load":{"concu`)
	f.Close()
	bad := strconv.Itoa(good + 1)

	code, stdout, stderr := run(t, "report", "--json", dir)
	if code != 0 {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "line "+bad) {
		t.Errorf("stderr does not name damaged line %s: %q", bad, stderr)
	}
	var sum struct {
		Run *struct {
			Target      struct{ Model, API string }
			Interrupted bool
		}
		Points []struct {
			Requests struct{ Completed, Failed, Cancelled int }
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("report --json: %v\n%s", err, stdout)
	}
	if sum.Run == nil || sum.Run.Target.Model != "m" || sum.Run.Target.API != "openai-completions" || !sum.Run.Interrupted {
		t.Errorf("run header from run.json: %+v", sum.Run)
	}
	n := 0
	for _, p := range sum.Points {
		n += p.Requests.Completed + p.Requests.Failed + p.Requests.Cancelled
	}
	if n != good {
		t.Errorf("report counts %d requests, the file holds %d good records", n, good)
	}
	if !strings.Contains(strings.Join(sum.Warnings, "\n"), "interrupted") {
		t.Errorf("warnings do not say the run was interrupted: %q", sum.Warnings)
	}

	code, _, stderr = run(t, "report", "--strict", dir)
	if code != 1 || !strings.Contains(stderr, "line "+bad) {
		t.Errorf("report --strict: exit %d, stderr %q; want 1 naming line %s", code, stderr, bad)
	}
}

// TestCLIFlagsAfterArguments: flags may follow the run directory.
func TestCLIFlagsAfterArguments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if code, _, stderr := run(t, "run", "--concurrency", "1", "--requests", "2", "--output-tokens", "4", "--out", dir); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "report", dir, "--json")
	if code != 0 || !strings.HasPrefix(stdout, "{") || !strings.Contains(stdout, `"schema": "servebench.summary/v1"`) {
		t.Errorf("report DIR --json: exit %d, stdout %.80q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "report", dir, "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "index,") {
		t.Errorf("report DIR --format csv: exit %d, stdout %.80q, stderr %q", code, stdout, stderr)
	}
}

// TestCLIBadFlagValueIsOneLine: a bad value is one line naming the flag
// and the form it wants, not 100 lines of usage.
func TestCLIBadFlagValueIsOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--duration", "60"}, "Error: --duration wants a duration such as 60s, got \"60\"\n"},
		{[]string{"report", "runs/a", "--strict=perhaps"}, "Error: --strict wants true or false (or no value), got \"perhaps\"\n"},
		{[]string{"run", "--nope"}, "Error: unknown flag --nope\nTry: servebench run -h lists its flags\n"},
		{[]string{"run", "--concurency", "2"}, "Error: unknown flag --concurency\nTry: --concurrency (servebench run -h lists its flags)\n"},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, tt.args...)
		if code != 2 || stdout != "" || stderr != tt.want {
			t.Errorf("%q: exit %d, stderr %q; want 2, %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestCLIBadInputNamesTheValue: each bad flag value, dataset field or
// objective value is a usage error (exit 2), before any load, naming the
// flag or field and the value given.
func TestCLIBadInputNamesTheValue(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := write("huge.jsonl", `{"prompt": "hi", "output_tokens": 1e11}`+"\n")
	number := write("number.jsonl", `{"prompt": 42}`+"\n")
	objective := write("o.yaml", "name: x\nslos:\n  - ttft p95 <= banana\n")
	used := filepath.Join(dir, "used")
	os.Mkdir(used, 0o755)
	write("used/records.jsonl", "")
	// Nothing listens at the URL: an error about it would mean the input
	// was taken and the server asked. A dataset is read once the server
	// is known (its tokenizer sizes the prompts): the simulator's.
	run1 := []string{"run", "--url", "http://127.0.0.1:1", "--model", "m", "--tokenizer", "cl100k_base", "--requests", "1"}
	sim1 := []string{"run", "--requests", "1", "--concurrency", "1"}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--rate", "NaN"}, []string{`Error: --rate "NaN": "NaN" is not a number of requests per second`}},
		{[]string{"--rate", "Inf"}, []string{`Error: --rate "Inf": an infinite rate`}},
		{[]string{"--rate", "1e12"}, []string{`Error: --rate "1e12": "1e12" requests per second is more than the 1000000 a run can send`}},
		{[]string{"--concurrency", "2,,4"}, []string{`Error: --concurrency "2,,4": item 2 is empty`}},
		{[]string{"--grace", "-1s"}, []string{"Error: --grace -1s: must not be negative", "Try: servebench run --grace 10s"}},
		{[]string{"--timeout", "-1s"}, []string{"Error: --timeout -1s: must not be negative", "Try: servebench run --timeout 10m"}},
		{[]string{"--sample-interval", "-1s"}, []string{"Error: --sample-interval -1s: want a duration from 10ms to 1h"}},
		{[]string{"--dataset", huge}, []string{`huge.jsonl:1: "output_tokens" 1e11: more than 1073741824`}},
		{[]string{"--dataset", number}, []string{`number.jsonl:1: "prompt" 42: want a string`}},
		{[]string{"--slo", "ttft p95 <= banana"}, []string{`Error: --slo: SLO "ttft p95 <= banana": value "banana" is not a number, e.g. 'ttft p95 <= 1.5s'`}},
		{[]string{"--objective", objective}, []string{`slos[0]: SLO "ttft p95 <= banana": value "banana" is not a number`, "Try: "}},
		{[]string{"--out", used}, []string{"Error: --out " + used + " already holds a run (records.jsonl)", "Try: choose another directory"}},
		{[]string{"--concurency", "2"}, []string{"Error: unknown flag --concurency\nTry: --concurrency (servebench run -h lists its flags)\n"}},
		{[]string{"report", used, "json"}, []string{`Error: "json" is not a run directory or records file: for json output, give --json`, "Try: servebench report --json " + used + "\n"}},
	}
	for _, tt := range tests {
		args := append(slices.Clone(run1), tt.args...)
		switch tt.args[0] {
		case "report":
			args = tt.args
		case "--dataset":
			args = append(slices.Clone(sim1), tt.args...)
		}
		code, stdout, stderr := run(t, args...)
		if code != 2 || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tt.args, code, stdout)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", tt.args, stderr, w)
			}
		}
	}
}

// TestCLIVersion: version prints the module version the build recorded,
// and -ldflags -X still overrides it.
func TestCLIVersion(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mod" {
			want = f[2]
		}
	}
	code, stdout, _ := run(t, "version")
	if code != 0 || want == "" || !strings.HasPrefix(stdout, "servebench "+want) {
		t.Errorf("version: %d %q, want the build's module version %q", code, stdout, want)
	}
	// Built with VCS stamping where the checkout allows it, the line also
	// names the revision the build info records.
	bin := filepath.Join(t.TempDir(), "servebench")
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "-ldflags", "-X github.com/servebench/servebench/internal/bench.Version=v9.8.7", ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(b), "servebench v9.8.7 · ") || !strings.Contains(string(b), runtime.Version()) {
		t.Errorf("-ldflags version: %q, %v", b, err)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(info)) {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision=") {
			if want := "revision " + strings.TrimPrefix(f[1], "vcs.revision="); !strings.Contains(string(b), want) {
				t.Errorf("version %q lacks %q from the build info", b, want)
			}
		}
	}
}
