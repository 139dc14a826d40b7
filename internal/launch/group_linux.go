package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// groupLive reports whether a process of the group is alive, a zombie not
// counting (but everything counting where /proc cannot be read). A
// server's workers that outlive it are reparented to init, or to
// servebench itself where it is init (a container's entry point) or a
// subreaper; such a parent may never reap them, and a group of zombies
// holds no port, memory or GPU.
func groupLive(pgid int) bool {
	if !groupAlive(pgid) {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true
	}
	live := false
	eachInGroup(pgid, func(int, procInfo) { live = true }, func(p procInfo) bool { return p.state != "Z" })
	return live
}

// liveInGroup lists the processes of group pgid that are not zombies.
func liveInGroup(pgid int) []int {
	var pids []int
	eachInGroup(pgid, func(pid int, _ procInfo) { pids = append(pids, pid) }, func(p procInfo) bool { return p.state != "Z" })
	return pids
}

// reapOrphans reaps the zombies of group pgid that are this process's
// children but not its leader (exec.Cmd's to wait for): the workers a
// server left, reparented here because servebench is init or a subreaper.
func reapOrphans(pgid int) {
	me := os.Getpid()
	eachInGroup(pgid, func(pid int, _ procInfo) {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}, func(p procInfo) bool { return p.state == "Z" && p.ppid == me })
}

// procInfo is what /proc/PID/stat says of a process that a group's
// checks need.
type procInfo struct {
	state      string
	ppid, pgrp int
}

// eachInGroup calls fn for each process of group pgid, but its leader
// when it is a zombie, that keep says to.
func eachInGroup(pgid int, fn func(pid int, p procInfo), keep func(procInfo) bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		p, ok := procStat(path)
		if !ok || p.pgrp != pgid || !keep(p) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if pid == pgid && p.state == "Z" {
			continue // the leader is exec.Cmd's to reap
		}
		fn(pid, p)
	}
}

// procStat reads a process's state, parent and group from /proc/PID/stat,
// whose second field, the command's name, may hold blanks and parentheses.
func procStat(path string) (procInfo, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procInfo{}, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	return procInfo{state: f[0], ppid: ppid, pgrp: pgrp}, err1 == nil && err2 == nil
}
