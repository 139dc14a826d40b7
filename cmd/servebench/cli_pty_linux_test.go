package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cliPTY opens a pseudo-terminal and returns its terminal side.
func cliPTY(t *testing.T) *os.File {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// TestCLIReportOnATerminalIsAUsageError: report with no argument and a
// terminal for input says what it wants instead of waiting on stdin.
func TestCLIReportOnATerminalIsAUsageError(t *testing.T) {
	cmd := exec.Command(binary, "report")
	cmd.Stdin = cliPTY(t)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !bytes.Contains(errb.Bytes(), []byte("report needs a run directory")) {
			t.Errorf("report on a terminal: %v, stderr %q; want exit 2 and a usage line", err, errb.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Error("report on a terminal waited on stdin for 5s")
	}
}
