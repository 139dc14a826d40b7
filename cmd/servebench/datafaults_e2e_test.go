package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
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
