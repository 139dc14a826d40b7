package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// DefaultStopGrace is how long a server has to exit after SIGTERM before
// its group is killed: vLLM and llama.cpp shut down in seconds, and a
// sweep should not wait for one that hangs.
const DefaultStopGrace = 10 * time.Second

// waitDelay bounds how long the log is copied after the server exits,
// should a stray process keep its output open.
const waitDelay = 2 * time.Second

// Spec is a server to start.
type Spec struct {
	// Args is the command and its arguments, already expanded.
	Args []string
	// Env is added to this process's environment (K=V).
	Env []string
	// Log receives the server's stdout and stderr (nil: discarded).
	Log io.Writer
	// Grace is how long the server has to exit after SIGTERM should this
	// process die without stopping it (DefaultStopGrace when 0); Stop
	// takes its own.
	Grace time.Duration
}

// Process is a started server, in a process group of its own.
type Process struct {
	cmd     *exec.Cmd
	Started time.Time
	done    chan struct{}
	waitErr error
	stopped bool
	mu      sync.Mutex
	guard   *watchdog
}

// Start starts the server in a process group of its own (so that its
// children are stopped with it), watched on Linux by a watchdog that stops
// the group should this process die before Stop (watchdog_linux.go). A
// command that cannot be started (not found, not executable) is an error
// here; one that exits at once is seen by Exited.
func Start(spec Spec) (*Process, error) {
	if len(spec.Args) == 0 {
		return nil, errors.New("no command")
	}
	cmd := exec.Command(spec.Args[0], spec.Args[1:]...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = spec.Log, spec.Log
	cmd.SysProcAttr = groupAttr()
	cmd.WaitDelay = waitDelay
	p := &Process{cmd: cmd, done: make(chan struct{})}
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	grace := spec.Grace
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	guard, err := startWatchdog(p.PID(), grace)
	if err != nil {
		// An unwatched server is the stray this guards against.
		signalGroup(p.PID(), syscall.SIGKILL)
		<-p.done
		return nil, err
	}
	p.guard = guard
	return p, nil
}

// PID is the server's process id (its group's id too).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the server process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitText says how the server exited ("exited with status 1", "was
// killed by signal 9 (killed)"), once Exited is closed.
func (p *Process) ExitText() string {
	<-p.done
	st := p.cmd.ProcessState
	if st == nil {
		return "did not run: " + p.waitErr.Error()
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return "exited with status " + strconv.Itoa(st.ExitCode())
}

// Stopped says how a server was stopped.
type Stopped struct {
	// Seconds from SIGTERM to the group's end.
	Seconds float64 `json:"stop_s"`
	// Killed is true when the group outlived the grace and was killed.
	Killed bool `json:"killed"`
}

// Stop stops the server's process group: SIGTERM, then SIGKILL once grace
// has passed (DefaultStopGrace when 0); it returns when no process of the
// group is left, or with an error saying that some are. ctx bounds the
// whole stop (a second Ctrl-C kills at once).
func (p *Process) Stop(ctx context.Context, grace time.Duration) (Stopped, error) {
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	pgid := p.PID()
	start := time.Now()
	signalGroup(pgid, syscall.SIGTERM)
	var st Stopped
	t := time.NewTimer(grace)
	defer t.Stop()
	if !waitGroupGone(ctx, pgid, p.done, t.C) {
		st.Killed = true
		signalGroup(pgid, syscall.SIGKILL)
		kill := time.NewTimer(grace)
		defer kill.Stop()
		if !waitGroupGone(context.Background(), pgid, p.done, kill.C) {
			return st, fmt.Errorf("process group %d is still there after SIGKILL", pgid)
		}
	}
	st.Seconds = time.Since(start).Seconds()
	p.guard.release()
	return st, nil
}

// waitGroupGone waits until the leader has been reaped and no process of
// the group is alive (groupLive: zombies servebench must reap, as init or a
// subreaper, are reaped then); false when deadline fires (or ctx ends)
// first.
func waitGroupGone(ctx context.Context, pgid int, leader <-chan struct{}, deadline <-chan time.Time) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-leader:
			if !groupLive(pgid) {
				reapOrphans(pgid)
				return true
			}
		default:
		}
		select {
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
		case <-leader:
		}
	}
}

// FreePort is a loopback TCP port free now: the kernel's pick, released
// for the server to take.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortFree reports whether nothing listens on the loopback port.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Accepts reports whether the loopback port accepts a connection.
func Accepts(ctx context.Context, port int) bool {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Tail keeps the last bytes written to it: the end of a server's log,
// for a failure's reason.
type Tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

// NewTail keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// Lines is the last n whole lines kept.
func (t *Tail) Lines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimRight(t.buf, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}
