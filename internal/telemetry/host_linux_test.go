package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc is a proc tree in a temporary directory that a test changes
// between readings, with a clock it advances.
type fakeProc struct {
	t    *testing.T
	dir  string
	wall time.Time
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, dir: t.TempDir(), wall: time.Unix(1e9, 0)}
	f.machine(1000, 9000)
	f.write("meminfo", "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\n")
	return f
}

func (f *fakeProc) write(name, text string) {
	f.t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// machine sets /proc/stat's totals: busy and idle ticks over two CPUs.
func (f *fakeProc) machine(busy, idle int) { f.machineSteal(busy, idle, 0) }

// machineSteal writes /proc/stat's all-CPU line: user, idle and steal
// ticks.
func (f *fakeProc) machineSteal(busy, idle, steal int) {
	f.write("stat", fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 %d 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\nbtime 1764550000\n", busy, idle, steal))
}

// proc writes a process's stat: ticks of CPU (user), rss in pages.
func (f *fakeProc) proc(pid, ppid int, comm string, start, ticks, rssPages int) {
	f.write(fmt.Sprintf("%d/stat", pid), fmt.Sprintf(
		"%d (%s) S %d %d %d 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0 %d 100000 %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, ppid, pid, pid, ticks, start, rssPages))
}

func (f *fakeProc) kill(pid int) {
	if err := os.RemoveAll(filepath.Join(f.dir, fmt.Sprint(pid))); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) clock() time.Time { return f.wall }

// read advances the clock by dt and takes one reading.
func (f *fakeProc) read(s *hostSource, dt time.Duration) (*Host, []*Event) {
	f.t.Helper()
	f.wall = f.wall.Add(dt)
	samples, err := s.Read(context.Background(), 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var h *Host
	var events []*Event
	for _, x := range samples {
		switch {
		case x.Host != nil && x.Source == KindHost && x.Instance == InstanceProcfs:
			h = x.Host
		case x.Event != nil && x.Source == KindEvent:
			events = append(events, x.Event)
		default:
			f.t.Fatalf("unexpected sample %+v", x)
		}
	}
	if h == nil {
		f.t.Fatal("no host sample")
	}
	return h, events
}

func hostEvents(es []*Event) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s: %s\n", e.Kind, e.Detail)
	}
	return b.String()
}

func hostNear(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

// TestHostServerTree: a server whose runner child comes, restarts and
// goes, then the server itself exits. Each reading sums the tree's
// resident memory and its CPU time since the previous reading; each
// change in the tree is an event, and the exit a server_exit event with
// what was last known.
func TestHostServerTree(t *testing.T) {
	page := float64(os.Getpagesize())
	f := newFakeProc(t)
	f.proc(1, 0, "init", 1, 0, 10)
	f.proc(100, 1, "ollama", 500, 100, 1000)
	s, note, err := newHostSource(HostOptions{PID: 100, ProcRoot: f.dir}, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "server process 100 (ollama)") {
		t.Errorf("note %q does not name the process", note)
	}

	// 2 s later: the server used 0.5 s and a runner appeared that used 1.5 s.
	f.proc(100, 1, "ollama", 500, 150, 1000)
	f.proc(101, 100, "ollama runner", 600, 150, 9000)
	f.machine(1300, 9100) // 300 busy of 400 ticks
	h, ev := f.read(s, 2*time.Second)
	if h.ServerPID != 100 || h.ServerProcesses != 2 || !hostNear(h.ServerRSSBytes, 10000*page) {
		t.Errorf("reading 1: pid %d, %d processes, rss %v", h.ServerPID, h.ServerProcesses, *h.ServerRSSBytes)
	}
	if !hostNear(h.ServerCPUPercent, 100) || !hostNear(h.CPUPercent, 75) || !hostNear(h.StealPercent, 0) {
		t.Errorf("reading 1: server CPU %v%%, want 100; machine %v%%, want 75; steal %v, want 0", *h.ServerCPUPercent, *h.CPUPercent, fmtPtr(h.StealPercent))
	}
	if !hostNear(h.RAMTotalBytes, 16000000*1024) || !hostNear(h.RAMAvailBytes, 6000000*1024) || !hostNear(h.RAMUsedBytes, 10000000*1024) {
		t.Errorf("memory: total %v, available %v, used %v", *h.RAMTotalBytes, *h.RAMAvailBytes, *h.RAMUsedBytes)
	}
	if got := hostEvents(ev); got != "server_process: process 101 (ollama runner) joined the server's tree, child of 100\n" {
		t.Errorf("reading 1 events:\n%s", got)
	}

	// The runner restarts: 101 is gone (its last 0.2 s lost), 102 is new
	// with 0.1 s; the server used 0.1 s; one second passed.
	f.kill(101)
	f.proc(102, 100, "ollama runner", 700, 10, 8000)
	f.proc(100, 1, "ollama", 500, 160, 1000)
	h, ev = f.read(s, time.Second)
	if h.ServerProcesses != 2 || !hostNear(h.ServerRSSBytes, 9000*page) || !hostNear(h.ServerCPUPercent, 20) {
		t.Errorf("reading 2: %d processes, rss %v, cpu %v%%", h.ServerProcesses, *h.ServerRSSBytes, *h.ServerCPUPercent)
	}
	want := fmt.Sprintf("server_process: process 101 (ollama runner) left the server's tree; it had %s resident\n"+
		"server_process: process 102 (ollama runner) joined the server's tree, child of 100\n", mibText(9000*page))
	if got := hostEvents(ev); got != want {
		t.Errorf("reading 2 events:\n%swant\n%s", got, want)
	}

	// The server and its runner go away; the pid is reused by another
	// process, which is not the server.
	f.kill(102)
	f.proc(100, 1, "bash", 900, 0, 10)
	h, ev = f.read(s, time.Second)
	want = fmt.Sprintf("server_exit: server process 100 (ollama) went away; last reading: %s resident in 2 processes\n", mibText(9000*page))
	if got := hostEvents(ev); got != want {
		t.Errorf("exit events:\n%swant\n%s", got, want)
	}
	if h.ServerPID != 0 || h.ServerRSSBytes != nil || h.ServerCPUPercent != nil || h.RAMAvailBytes == nil {
		t.Errorf("after the exit: %+v; want the machine only", h)
	}
	if _, ev = f.read(s, time.Second); len(ev) != 0 {
		t.Errorf("the exit reported again:\n%s", hostEvents(ev))
	}
}

// TestHostSteal: the hypervisor's steal is part of the machine's busy
// time and its own share of all cores' time.
func TestHostSteal(t *testing.T) {
	f := newFakeProc(t)
	f.proc(100, 1, "ollama", 500, 100, 1000)
	s, _, err := newHostSource(HostOptions{PID: 100, ProcRoot: f.dir}, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	// +300 user, +100 idle, +40 steal: 340 of 440 ticks busy, 40 stolen.
	f.machineSteal(1300, 9100, 40)
	h, _ := f.read(s, 2*time.Second)
	if !hostNear(h.CPUPercent, 100*340.0/440) || !hostNear(h.StealPercent, 100*40.0/440) {
		t.Errorf("busy %s%%, steal %s%%; want %.4f and %.4f", fmtPtr(h.CPUPercent), fmtPtr(h.StealPercent), 100*340.0/440, 100*40.0/440)
	}
	// No time passed on the counters: neither.
	h, _ = f.read(s, time.Second)
	if h.CPUPercent != nil || h.StealPercent != nil {
		t.Errorf("counters unchanged: busy %s, steal %s; want both absent", fmtPtr(h.CPUPercent), fmtPtr(h.StealPercent))
	}
}

// TestHostSourceOptions: what the source follows, and a --server-pid
// that names no process.
func TestHostSourceOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        HostOptions
		wantNote string
		wantErr  string
	}{
		{"by port", HostOptions{Port: 11435}, "server process 100 (ollama), found listening on port 11435, and its children", ""},
		{"by pid", HostOptions{PID: 101}, "server process 101 (ollama) and its children", ""},
		{"no such pid", HostOptions{PID: 4242}, "", "4242: no such process"},
		{"zombie pid", HostOptions{PID: 999}, "", "999: no such process"},
		{"not found by port", HostOptions{Port: 9001}, "server process not followed: nothing listens on port 9001", ""},
		{"simulator", HostOptions{Port: 11435, InProcess: true}, inProcessNote, ""},
		{"remote target", HostOptions{}, "no server process followed: the target is not on this machine's loopback", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.ProcRoot = "testdata/proc"
			s, note, err := NewHostSource(tc.o)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrNoServerProcess) || !strings.HasPrefix(err.Error(), tc.wantErr) || s != nil {
					t.Fatalf("got %v, %v; want an error starting %q", s, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(note, tc.wantNote) {
				t.Errorf("note %q, want it to start %q", note, tc.wantNote)
			}
		})
	}
}
