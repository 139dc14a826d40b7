//go:build unix

package launch

import "syscall"

// groupAttr puts the server in a process group of its own, whose id is
// its pid.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

// groupAlive reports whether any process of the group is left (zombies
// included, until their parent reaps them).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
