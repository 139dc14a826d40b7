package telemetry

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a server: TestHostHelperServer.
const helperEnv = "SERVEBENCH_HOST_HELPER"

// TestHostHelperServer is not a test: run by TestHostRealProcess with
// helperEnv set, it listens on a loopback port, starts a child (a runner),
// prints "PORT CHILD_PID", works a little when told to and waits to be
// killed.
func TestHostHelperServer(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the server process TestHostRealProcess starts")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	go child.Wait() // reap it when the test kills it
	fmt.Println(ln.Addr().(*net.TCPAddr).Port, child.Process.Pid)
	// Work for 200 ms when told to (a line on stdin), then wait.
	bufio.NewReader(os.Stdin).ReadString('\n')
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// startHelperServer starts TestHostHelperServer; it is killed when the
// test ends.
func startHelperServer(t *testing.T) (cmd *exec.Cmd, work io.Writer, port, child int) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestHostHelperServer$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if work, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if child > 0 {
			syscall.Kill(child, syscall.SIGKILL)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, err2 := fmt.Sscan(line, &port, &child); err != nil || err2 != nil {
		t.Fatalf("helper server said %q (%v, %v)", line, err, err2)
	}
	return cmd, work, port, child
}

// TestHostRealProcess: a real server process, found by the port it
// listens on and by its pid, is read with its child (non-zero CPU and
// resident memory); its child's exit is noted, and its own exit (killed,
// not yet reaped) is a server_exit event.
func TestHostRealProcess(t *testing.T) {
	cmd, work, port, child := startHelperServer(t)
	s, note, err := NewHostSource(HostOptions{Port: port})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("server process %d (", cmd.Process.Pid)
	if !strings.HasPrefix(note, want) {
		t.Fatalf("by port: note %q, want it to start %q", note, want)
	}
	byPID, note, err := NewHostSource(HostOptions{PID: cmd.Process.Pid})
	if err != nil || !strings.HasPrefix(note, want) {
		t.Fatalf("by pid: note %q, %v", note, err)
	}
	fmt.Fprintln(work) // the helper works for 200 ms of the next 300
	time.Sleep(300 * time.Millisecond)
	for _, src := range []Source{s, byPID} {
		h, _ := readHost(t, src)
		if h.ServerPID != cmd.Process.Pid || h.ServerProcesses != 2 {
			t.Errorf("%s: pid %d with %d processes, want %d with its child", src.Name(), h.ServerPID, h.ServerProcesses, cmd.Process.Pid)
		}
		if h.ServerRSSBytes == nil || *h.ServerRSSBytes < 1<<20 || h.ServerCPUPercent == nil || *h.ServerCPUPercent <= 0 {
			t.Errorf("%s: rss %v, cpu %v; want both read and non-zero", src.Name(), h.ServerRSSBytes, h.ServerCPUPercent)
		}
	}

	syscall.Kill(child, syscall.SIGKILL)
	waitGone(t, child)
	if _, ev := readHost(t, s); len(ev) != 1 || !strings.Contains(ev[0].Detail, fmt.Sprintf("process %d (sleep) left", child)) {
		t.Errorf("the child's exit: events\n%s", hostEvents(ev))
	}
	cmd.Process.Kill() // not reaped yet: a zombie is gone too
	waitGone(t, cmd.Process.Pid)
	h, ev := readHost(t, s)
	if len(ev) != 1 || ev[0].Kind != EventServerExit || !strings.Contains(ev[0].Detail, fmt.Sprintf("server process %d", cmd.Process.Pid)) {
		t.Errorf("the server's exit: events\n%s", hostEvents(ev))
	}
	if h.ServerPID != 0 || h.RAMAvailBytes == nil {
		t.Errorf("after the exit: %+v, want the machine only", h)
	}
}

// TestHostInProcess: a server listening inside this process is the
// client itself, not reported as a server.
func TestHostInProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, note, err := NewHostSource(HostOptions{Port: ln.Addr().(*net.TCPAddr).Port})
	if err != nil || note != inProcessNote {
		t.Fatalf("note %q, %v; want %q", note, err, inProcessNote)
	}
	if h, _ := readHost(t, s); h.ServerPID != 0 || h.ServerRSSBytes != nil {
		t.Errorf("the client reported as the server: %+v", h)
	}
}

func readHost(t *testing.T, s Source) (*Host, []*Event) {
	t.Helper()
	samples, err := s.Read(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var h *Host
	var ev []*Event
	for _, x := range samples {
		if x.Host != nil {
			h = x.Host
		}
		if x.Event != nil {
			ev = append(ev, x.Event)
		}
	}
	if h == nil {
		t.Fatal("no host sample")
	}
	return h, ev
}

// waitGone waits until pid has exited (a zombie counts), up to 5 s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
	}
	t.Fatalf("process %d still runs after 5 s", pid)
}
