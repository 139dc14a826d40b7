package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killedHelperEnv makes the test binary a server with a worker of its own
// (as vLLM's and Ollama's are) for the killed-sweep tests: "serve" or
// "stubborn" (server and worker ignore SIGTERM); "worker" is the worker.
const killedHelperEnv = "SERVEBENCH_KILLED_HELPER"

func init() {
	mode := os.Getenv(killedHelperEnv)
	switch mode {
	case "":
		return
	case "worker-stubborn":
		signal.Ignore(syscall.SIGTERM)
		fallthrough
	case "worker":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	w := exec.Command(os.Args[0], "-test.run=NONE")
	w.Env = append(os.Environ(), killedHelperEnv+"=worker")
	if mode == "stubborn" {
		w.Env = append(w.Env, killedHelperEnv+"=worker-stubborn")
	}
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("pids %d %d\n", os.Getpid(), w.Process.Pid)
	sweepHelper(mode, os.Args[len(os.Args)-1]) // "stubborn" ignores SIGTERM
	os.Exit(0)
}

// A sweep killed with SIGKILL in the middle of its load leaves nothing of
// its server's group running: its watchdog stops it, SIGKILL after the
// grace for a server that ignores SIGTERM, and ends itself.
func TestSweepKilledLeavesNoServer(t *testing.T) {
	for _, mode := range []string{"serve", "stubborn"} {
		t.Run(mode, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "killed")
			cmd := exec.Command(binary, "sweep",
				"--serve", os.Args[0]+" -test.run=NONE {port}", "--env", killedHelperEnv+"={mode}",
				"--param", "mode="+mode, "--ready-timeout", "20s", "--stop-grace", "1s",
				"--concurrency", "1", "--requests", "100000", "--prompt-tokens", "8", "--output-tokens", "4",
				"--tokenizer", "cl100k_base", "--model", "m", "--no-telemetry", "--no-history", "--out", dir)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var server, worker, watchdog int
			t.Cleanup(func() {
				cmd.Process.Kill()
				cmd.Wait()
				for _, pid := range []int{server, worker, watchdog} {
					if pid > 0 && procLive(pid) {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			server, worker = killedServerPIDs(t, filepath.Join(dir, "mode-"+mode, "records.jsonl"))
			if watchdog = childNamed(cmd.Process.Pid, "servebench-wd"); watchdog == 0 {
				t.Fatal("the sweep started no watchdog")
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			cmd.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			for procLive(server) || procLive(worker) || procLive(watchdog) {
				if ctx.Err() != nil {
					t.Fatalf("15s after the sweep was killed: server %d live %v, its worker %d live %v, watchdog %d live %v",
						server, procLive(server), worker, procLive(worker), watchdog, procLive(watchdog))
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("server, worker and watchdog gone %s after the sweep's SIGKILL (stop grace 1s)", time.Since(killed).Round(time.Millisecond))
		})
	}
}

var killedPIDs = regexp.MustCompile(`(?m)^pids (\d+) (\d+)$`)

// killedServerPIDs waits until the load has begun (its records file holds
// a record) and returns the pids the server wrote to its log.
func killedServerPIDs(t *testing.T, records string) (server, worker int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(records)
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(records), "server.log"))
		if m := killedPIDs.FindSubmatch(log); m != nil && len(b) > 0 {
			server, _ = strconv.Atoi(string(m[1]))
			worker, _ = strconv.Atoi(string(m[2]))
			return server, worker
		}
		if time.Now().After(deadline) {
			t.Fatalf("no load after 30s; server.log: %q", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// childNamed is the pid of parent's child whose command name is name.
func childNamed(parent int, name string) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		f := strings.Fields(s[shut+1:])
		if open < 0 || len(f) < 2 || s[open+1:shut] != name || f[1] != strconv.Itoa(parent) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		return pid
	}
	return 0
}

// procLive reports whether pid is a process that is not a zombie (an
// orphan's zombie is init's to reap).
func procLive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}
