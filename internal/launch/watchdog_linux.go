package launch

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// A watchdog stops a server's process group when servebench dies without
// stopping it (SIGKILL, the OOM killer, a crash): it is this same binary,
// re-executed, holding the read end of a pipe whose write end only
// servebench holds. The pipe reaches end of file however servebench ends;
// a release byte before it means the group was stopped already. The
// server stays servebench's own child, so its pid, exit status and log are
// unchanged; the watchdog lives only as long as the group.

// watchdogName is the watchdog's argv[0], so that it is recognised (in
// init) and named in ps.
const watchdogName = "servebench-watchdog"

// watchdogPoll is how often a watchdog checks that the group is still
// there, so that it does not outlive a server that exited by itself.
const watchdogPoll = time.Second

// init runs the watchdog when this binary was started as one, before any
// other work of the program it is part of (servebench, or a test binary).
func init() {
	if len(os.Args) == 3 && os.Args[0] == watchdogName {
		os.Exit(watch(os.Stdin, os.Args[1], os.Args[2]))
	}
}

type watchdog struct {
	pid int
	w   *os.File
}

// startWatchdog starts the watchdog of the group pgid, which stops it
// within grace (then SIGKILL) should this process end without release.
func startWatchdog(pgid int, grace time.Duration) (*watchdog, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child holds w
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// /proc/self/exe is this binary even if its file was replaced since.
	cmd := &exec.Cmd{
		Path:  "/proc/self/exe",
		Args:  []string{watchdogName, strconv.Itoa(pgid), grace.String()},
		Stdin: r,
		// A group of its own: the terminal's Ctrl-C and hangup, meant for
		// servebench, do not reach it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("its watchdog could not be started: %w", err)
	}
	go cmd.Wait() // reaped whenever it ends
	return &watchdog{pid: cmd.Process.Pid, w: w}, nil
}

// release tells the watchdog that the group is gone, and lets it exit.
func (d *watchdog) release() {
	if d == nil {
		return
	}
	d.w.Write([]byte{1})
	d.w.Close()
}

// watch is the watchdog's life: until released, or until the group is
// gone, or, when servebench has gone first, until it has stopped the
// group as Stop would.
func watch(in *os.File, pgidArg, graceArg string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	_ = os.WriteFile("/proc/self/comm", []byte("servebench-wd"), 0) // ps shows "exe" otherwise
	pgid, err := strconv.Atoi(pgidArg)
	grace, gerr := time.ParseDuration(graceArg)
	if err != nil || gerr != nil || pgid <= 1 {
		return 2
	}
	released := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := in.Read(b[:])
		released <- n == 1
	}()
	tick := time.NewTicker(watchdogPoll)
	defer tick.Stop()
	for {
		select {
		case ok := <-released:
			if !ok {
				stopOrphan(pgid, grace)
			}
			return 0
		case <-tick.C:
			if !groupLive(pgid) {
				return 0
			}
		}
	}
}

// stopOrphan stops a group whose servebench is gone: SIGTERM, SIGKILL
// after grace, as Stop does.
func stopOrphan(pgid int, grace time.Duration) {
	signalGroup(pgid, syscall.SIGTERM)
	if pollGone(pgid, grace) {
		return
	}
	signalGroup(pgid, syscall.SIGKILL)
	pollGone(pgid, grace)
}

// pollGone waits up to d for no process of the group to be alive. The
// orphans' zombies are init's to reap, and some inits (a container's) never
// do: a zombie does not count.
func pollGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for groupLive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
