package launch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a scripted server (helper) instead of
// running the tests.
const helperEnv = "LAUNCH_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helper(mode)
		return
	}
	os.Exit(m.Run())
}

// helper is a server that misbehaves as mode says; each mode ends by
// itself within a minute at most, should a test fail to stop it.
func helper(mode string) {
	fmt.Println("helper", mode, "token=s3cr3t-value")
	if h := platformHelpers[mode]; h != nil {
		h()
		return
	}
	switch mode {
	case "exit1":
		fmt.Fprintln(os.Stderr, "fatal: no model")
		os.Exit(1)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "child", "child-ignore-term":
		// a grandchild in the same group, as a server's workers are
		grand := "sleep"
		if mode == "child-ignore-term" {
			signal.Ignore(syscall.SIGTERM)
			grand = "ignore-term"
		}
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), helperEnv+"="+grand)
		if err := c.Start(); err != nil {
			os.Exit(2)
		}
		fmt.Println("grandchild", c.Process.Pid)
	case "parent", "parent-stubborn":
		// servebench: starts a server whose log is its own stdout, to be
		// killed by the test
		server := "child"
		if mode == "parent-stubborn" {
			server = "child-ignore-term"
		}
		p, err := Start(Spec{Args: []string{os.Args[0]}, Env: []string{helperEnv + "=" + server}, Log: os.Stdout, Grace: orphanGrace})
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Println("server", p.PID())
		if p.guard != nil {
			fmt.Println("watchdog", p.guard.pid)
		}
	}
	time.Sleep(time.Minute)
}

// platformHelpers are helper modes of one platform's tests, set by their
// files' init.
var platformHelpers = map[string]func(){}

// orphanGrace is the grace of the server a killed parent leaves.
const orphanGrace = 500 * time.Millisecond

func startHelper(t *testing.T, mode string, log *bytes.Buffer) *Process {
	t.Helper()
	var w *LineWriter
	if log != nil {
		w = &LineWriter{W: log, Filter: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("s3cr3t-value"), []byte("[redacted]")) }}
	}
	spec := Spec{Args: []string{os.Args[0]}, Env: []string{helperEnv + "=" + mode}}
	if w != nil {
		spec.Log = w
	}
	p, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		signalGroup(p.PID(), syscall.SIGKILL)
		if w != nil {
			w.Close()
		}
	})
	return p
}

func TestStopGroupWithChildren(t *testing.T) {
	p := startHelper(t, "child", nil)
	time.Sleep(200 * time.Millisecond) // let the grandchild start
	if !groupAlive(p.PID()) {
		t.Fatal("the group is not running")
	}
	st, err := p.Stop(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Killed {
		t.Error("a server that exits on SIGTERM was killed")
	}
	if groupLive(p.PID()) {
		t.Error("a process of the group is left")
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	p := startHelper(t, "ignore-term", nil)
	time.Sleep(200 * time.Millisecond) // let it ignore SIGTERM
	st, err := p.Stop(context.Background(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Killed {
		t.Error("a server ignoring SIGTERM: Killed is false")
	}
	if groupLive(p.PID()) {
		t.Error("a process of the group is left")
	}
	if got := p.ExitText(); !strings.Contains(got, "killed") {
		t.Errorf("ExitText() = %q, want it killed", got)
	}
}

func TestExitedAtOnceWithLog(t *testing.T) {
	var log bytes.Buffer
	p := startHelper(t, "exit1", &log)
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit")
	}
	if got := p.ExitText(); got != "exited with status 1" {
		t.Errorf("ExitText() = %q", got)
	}
	got := log.String()
	if !strings.Contains(got, "fatal: no model") || strings.Contains(got, "s3cr3t") || !strings.Contains(got, "[redacted]") {
		t.Errorf("log %q: want the server's output, its credential redacted", got)
	}
}

func TestStartMissingCommand(t *testing.T) {
	if _, err := Start(Spec{Args: []string{"servebench-no-such-command"}}); err == nil {
		t.Error("a command that does not exist started")
	}
}

func TestLineWriterKeepsLinesWhole(t *testing.T) {
	var out bytes.Buffer
	w := &LineWriter{W: &out, Filter: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("SECRET"), []byte("*")) }}
	// a credential split between two writes is still found
	for _, s := range []string{"a SEC", "RET b\nc SECR", "ET"} {
		w.Write([]byte(s))
	}
	w.Close()
	if got := out.String(); got != "a * b\nc *" {
		t.Errorf("got %q", got)
	}
}

func TestTailLines(t *testing.T) {
	tl := NewTail(16)
	tl.Write([]byte("one\ntwo\nthree\nfour\n"))
	if got := tl.Lines(2); got != "three\nfour" {
		t.Errorf("Lines(2) = %q", got)
	}
}

func TestPorts(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if !PortFree(port) || Accepts(context.Background(), port) {
		t.Fatalf("port %d: free %v, accepts %v", port, PortFree(port), Accepts(context.Background(), port))
	}
}
