//go:build !unix

package launch

import (
	"os"
	"syscall"
)

// Without process groups, the server alone is signalled.
func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func groupAlive(int) bool { return false }
