package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Fault-matrix cases where a fault used to lose records or invent them:
// Ctrl-C against the built-in simulator, a full disk, a stalled closed
// loop, duplicated and damaged files, a killed run's telemetry and a
// read-only history. Each checks what is on disk against what is printed
// and stored.

// Ctrl-C with the built-in simulator: the simulator outlives the client's
// grace, so the requests in flight finish (one signal) or are recorded
// cancelled (two), never as the server's errors.
func TestFaultInterruptBuiltinSimulator(t *testing.T) {
	tests := []struct {
		name    string
		signals int
		want    string // the class the requests in flight end with ("" ok)
	}{
		{"once: in flight finish", 1, ""},
		{"twice: in flight cancelled", 2, "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			cmd := exec.Command(binary, "run", "--concurrency", "8", "--requests", "400", "--out", dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			waitRecords(t, filepath.Join(dir, "records.jsonl"), 16)
			for range tt.signals {
				cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(50 * time.Millisecond)
			}
			if code := cliExitCode(t, cmd); code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, &out)
			}
			classes := loadRecords(t, dir)
			if classes["server_error"] != 0 || sum(classes) >= 400 {
				t.Errorf("records by class %v: want no server error, the run stopped early\n%s", classes, &out)
			}
			if tt.want != "" && classes[tt.want] == 0 {
				t.Errorf("records by class %v: want the requests in flight %s", classes, tt.want)
			}
			if tt.want == "" && classes[""] != sum(classes) {
				t.Errorf("records by class %v: want every request in flight finished", classes)
			}
			if !strings.Contains(out.String(), fmt.Sprintf("%d records written to %s", sum(classes), dir)) {
				t.Errorf("output does not count the %d records on disk:\n%s", sum(classes), &out)
			}
		})
	}
}

// A stalled closed loop: the server accepts every request and never
// answers. With the default 10-minute timeout, --duration 3s --grace 2s
// still ends at about duration plus grace, as an open loop does, with each
// request recorded as a timeout and the files written.
func TestFaultStalledClosedLoopEnds(t *testing.T) {
	var got atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			http.NotFound(w, r)
			return
		}
		got.Add(1)
		<-r.Context().Done()
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	cmd := exec.Command(binary, loadArgs(t, "http://"+l.Addr().String(), dir, "--concurrency", "2", "--duration", "3s", "--grace", "2s", "--json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ended := make(chan int, 1)
	go func() { ended <- cliExitCode(t, cmd) }()
	var code int
	select {
	case code = <-ended:
	case <-time.After(60 * time.Second):
		t.Fatalf("a stalled closed loop with --duration 3s --grace 2s still runs after 60s")
	}
	// At least the duration and the grace; the upper bound is loose, for
	// a loaded machine: the fault was a wait of the 10-minute timeout.
	if el := time.Since(start); el < 5*time.Second || el > 30*time.Second {
		t.Errorf("ran %v, want about 5 s (duration + grace)", el)
	}
	classes := loadRecords(t, dir)
	sent, _ := loadSent(t, dir)
	if classes["timeout_first"] != 2 || sum(classes) != 2 || sent != 2 || got.Load() != 2 {
		t.Errorf("records by class %v, sent %d, server saw %d: want 2 first-token timeouts, one per request sent", classes, sent, got.Load())
	}
	if code != 1 || !strings.Contains(stderr.String(), "every request failed") || !strings.Contains(stdout.String(), `"schema": "servebench.summary/v1"`) {
		t.Errorf("exit %d, stdout %q, stderr %q: want the summary printed, then exit 1 as every request failed", code, &stdout, &stderr)
	}
}
