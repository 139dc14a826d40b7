package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// liveRun is the binary running with --live: its URL, and what it wrote.
type liveRun struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

// startLive starts the binary with args and waits for the live view's
// URL, which it prints before the run starts.
func startLive(t *testing.T, env []string, args ...string) *liveRun {
	t.Helper()
	lr := &liveRun{cmd: exec.Command(binary, args...), done: make(chan struct{})}
	lr.cmd.Env = append(os.Environ(), env...)
	lr.cmd.Stdout = io.Discard
	pipe, err := lr.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lr.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			lr.mu.Lock()
			lr.stderr.WriteString(line + "\n")
			lr.mu.Unlock()
			if u, ok := strings.CutPrefix(line, "live view: http"); ok {
				select {
				case urls <- "http" + u:
				default:
				}
			}
		}
		lr.cmd.Wait()
		close(lr.done)
	}()
	t.Cleanup(func() {
		lr.cmd.Process.Kill()
		<-lr.done
	})
	select {
	case lr.url = <-urls:
	case <-lr.done:
		t.Fatalf("no live view URL:\n%s", lr.errText())
	case <-time.After(30 * time.Second):
		t.Fatalf("no live view URL within 30 s:\n%s", lr.errText())
	}
	return lr
}

func (lr *liveRun) errText() string {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.stderr.String()
}

// liveState is the part of GET /state the tests read.
type liveState struct {
	Seq      int    `json:"seq"`
	Status   string `json:"status"`
	Requests struct {
		Done     int `json:"done"`
		InFlight int `json:"in_flight"`
	} `json:"requests"`
	Points []map[string]json.RawMessage `json:"points"`
	Report string                       `json:"report"`
}

func getState(t *testing.T, url string) (liveState, string) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(url, "/") + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var s liveState
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("GET /state: %v\n%s", err, b)
	}
	return s, string(b)
}

// waitState polls /state until ok says so.
func waitState(t *testing.T, url string, what string, ok func(liveState) bool) (liveState, string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		s, raw := getState(t, url)
		if ok(s) {
			return s, raw
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the live state never showed %s", what)
	return liveState{}, ""
}

// liveFields are the figures the live state shares with summary.json's
// points, under the same names.
var liveFields = []string{"index", "load", "requests", "ttft_ms", "itl_ms", "e2e_ms", "decode_tps_per_request", "output_tps", "request_rate", "concurrency_achieved"}

// sameAsSummary: the state's points are summary.json's, field for field.
func sameAsSummary(t *testing.T, dir string, points []map[string]json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Points []map[string]json.RawMessage `json:"points"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(points) != len(sum.Points) {
		t.Fatalf("the live state has %d points, summary.json %d", len(points), len(sum.Points))
	}
	for i := range points {
		for _, k := range liveFields {
			if got, want := compactJSON(points[i][k]), compactJSON(sum.Points[i][k]); got != want {
				t.Errorf("point %d %s: live %s, summary.json %s", i, k, got, want)
			}
		}
	}
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	json.Compact(&buf, b)
	return buf.String()
}

const (
	liveKey    = "sk-live-e2e-key-0123456789"
	liveHeader = "hdr-live-e2e-secret"
)

// TestLiveState: run --live serves a state that changes while the run
// goes and ends equal to summary.json, and never shows a credential.
func TestLiveState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	lr := startLive(t, []string{"SB_LIVE_KEY=" + liveKey}, "run", "--live", "--live-linger", "1m", "--out", dir,
		"--concurrency", "2,4", "--requests", "60", "--output-tokens", "64",
		"--api-key-env", "SB_LIVE_KEY", "--header", "X-Secret: "+liveHeader)
	if !strings.HasPrefix(lr.url, "http://127.0.0.1:") || strings.Contains(lr.url, "token") {
		t.Errorf("--live alone: got %s, want a loopback URL without a token", lr.url)
	}
	first, _ := waitState(t, lr.url, "requests done", func(s liveState) bool { return s.Status == "running" && s.Requests.Done > 0 })
	second, _ := waitState(t, lr.url, "a later state", func(s liveState) bool { return s.Seq > first.Seq && s.Requests.Done > first.Requests.Done })
	if second.Status != "running" && second.Status != "measured" && second.Status != "ended" {
		t.Errorf("status: %q", second.Status)
	}
	end, raw := waitState(t, lr.url, "the run's end", func(s liveState) bool { return s.Status == "ended" })
	sameAsSummary(t, dir, end.Points)
	if end.Report != "report.html" {
		t.Errorf("report: got %q, want report.html", end.Report)
	}
	if resp, err := http.Get(lr.url + "report.html"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /report.html: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	page, err := http.Get(lr.url)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	for _, secret := range []string{liveKey, liveHeader} {
		if strings.Contains(raw, secret) || strings.Contains(string(html), secret) {
			t.Errorf("the live view shows the credential %q", secret)
		}
	}
	// Ctrl-C ends the linger at once
	lr.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-lr.done:
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after Ctrl-C in its linger")
	}
	if _, err := http.Get(lr.url + "state"); err == nil {
		t.Error("the live view still answers after the command ended")
	}
}

// TestLiveVerdicts: with an objective, each load's verdict reaches the
// live state as it is judged, and the objective's verdict at the end.
func TestLiveVerdicts(t *testing.T) {
	lr := startLive(t, nil, "run", "--live", "--live-linger", "1m", "--slo", "ttft p95 <= 30s",
		"--concurrency", "1,2", "--requests", "20", "--output-tokens", "16")
	_, raw := waitState(t, lr.url, "the run's end", func(s liveState) bool { return s.Status == "ended" })
	var s struct {
		Verdicts []struct {
			Label string `json:"label"`
		} `json:"verdicts"`
		Verdict *struct {
			Conclusion string `json:"conclusion"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, v := range s.Verdicts {
		labels = append(labels, v.Label)
	}
	if strings.Join(labels, " ") != "c=1 c=2" || s.Verdict == nil || s.Verdict.Conclusion == "" {
		t.Errorf("verdicts %v, final %+v; want c=1 and c=2 judged, and a conclusion", labels, s.Verdict)
	}
}
