package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is a finished child process: its wall time from start to exit, its
// CPU time and its peak resident memory.
type proc struct {
	Start    time.Time
	Wall     time.Duration
	CPU      time.Duration // user and system
	MaxRSSKB int64
	Stdout   []byte
}

// runProc runs a command to completion, timing it from the start of the
// process to its exit, as a user's shell would.
func runProc(name string, args ...string) (proc, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	p := proc{Start: start, Wall: time.Since(start), Stdout: out.Bytes()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.MaxRSSKB = ru.Maxrss // kilobytes on Linux
		p.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err != nil {
		return p, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(errb.String()))
	}
	return p, nil
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// stream server process, started for one measurement and killed after it.
type streamServer struct {
	cmd *exec.Cmd
	URL string
}

// startServer starts this program's serve mode as a separate process.
func startServer(args ...string) (*streamServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{"serve"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("stream server did not start: %w", err)
	}
	return &streamServer{cmd: cmd, URL: "http://" + strings.TrimSpace(addr)}, nil
}

func (s *streamServer) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// flushes fetches the server's flush log.
func (s *streamServer) flushes() (map[int64][]int64, error) {
	resp, err := http.Get(s.URL + "/flushes")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[int64][]int64
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// self runs this program in another mode and decodes its JSON output.
func self(v any, args ...string) (proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return proc{}, err
	}
	p, err := runProc(exe, args...)
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(p.Stdout, v)
}
