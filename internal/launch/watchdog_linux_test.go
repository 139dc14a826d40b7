package launch

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanWait bounds how long a killed parent's server group may take to
// go: the grace, the SIGKILL, and slack for a loaded machine.
const orphanWait = 15 * time.Second

// A parent (servebench) that is killed without stopping its server: the
// whole group, the server's own child included, is stopped by the
// watchdog; one that ignores SIGTERM is killed after the grace. The
// watchdog does not outlive the group.
func TestKilledParentLeavesNoServer(t *testing.T) {
	for _, tc := range []struct{ name, mode string }{
		{"server exits on SIGTERM", "parent"},
		{"server and its child ignore SIGTERM", "parent-stubborn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, pids := startParent(t, tc.mode)
			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			parent.Wait()
			pgid := pids["server"]
			if live := waitNoneLive(pgid, pids["watchdog"]); len(live) > 0 {
				t.Fatalf("%v still running %s after the parent was killed (group %d, watchdog %d)", live, orphanWait, pgid, pids["watchdog"])
			}
			t.Logf("group and watchdog gone %s after the parent's SIGKILL (grace %s)", time.Since(killed).Round(time.Millisecond), orphanGrace)
		})
	}
}

// startParent starts the helper parent in mode and returns it with the
// pids it reports: its server's, the server's child's, its watchdog's.
func startParent(t *testing.T, mode string) (*exec.Cmd, map[string]int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, k := range []string{"server", "grandchild", "watchdog"} {
			if pids[k] > 0 && live(pids[k]) {
				syscall.Kill(pids[k], syscall.SIGKILL)
			}
		}
		cmd.Wait()
	})
	got := make(chan map[string]int, 1)
	go func() {
		m := map[string]int{}
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 2 {
				if n, err := strconv.Atoi(f[1]); err == nil {
					m[f[0]] = n
				}
			}
			if m["server"] > 0 && m["grandchild"] > 0 && m["watchdog"] > 0 {
				break
			}
		}
		got <- m
		for sc.Scan() { // the server's log: drained, so that it never blocks
		}
	}()
	select {
	case m := <-got:
		for k, v := range m {
			pids[k] = v
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parent did not report its server, the server's child and the watchdog")
	}
	if pids["server"] == 0 || pids["grandchild"] == 0 || pids["watchdog"] == 0 {
		t.Fatalf("the parent reported %v", pids)
	}
	return cmd, pids
}

// waitNoneLive polls, up to orphanWait, until no process of the group
// and not the watchdog is alive; it returns those still alive.
func waitNoneLive(pgid, watchdog int) []int {
	ctx, cancel := context.WithTimeout(context.Background(), orphanWait)
	defer cancel()
	for {
		left := liveInGroup(pgid)
		if live(watchdog) {
			left = append(left, watchdog)
		}
		if len(left) == 0 || ctx.Err() != nil {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop releases the watchdog: it exits with the group.
func TestStopReleasesWatchdog(t *testing.T) {
	p := startHelper(t, "child", nil)
	if p.guard == nil || !live(p.guard.pid) {
		t.Fatal("no watchdog is running")
	}
	if _, err := p.Stop(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if left := waitNoneLive(p.PID(), p.guard.pid); len(left) > 0 {
		t.Errorf("%v still running after Stop", left)
	}
}

// live reports whether pid is a process that is not a zombie.
func live(pid int) bool {
	p, ok := procStat("/proc/" + strconv.Itoa(pid) + "/stat")
	return ok && p.state != "Z"
}
