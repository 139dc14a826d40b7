package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// sweepHelperEnv makes the test binary a scripted server for sweep's
// fault cases (sweepHelper) instead of running the tests.
const sweepHelperEnv = "SERVEBENCH_SWEEP_HELPER"

func init() {
	if mode := os.Getenv(sweepHelperEnv); mode != "" {
		sweepHelper(mode, os.Args[len(os.Args)-1])
		os.Exit(0)
	}
}

// sweepHelper is a server on 127.0.0.1:port that misbehaves as mode says:
// "exit" exits at once; "never" accepts connections and never answers;
// "die" serves the readiness request and three more, then exits; "stubborn"
// serves and ignores SIGTERM. Each ends by itself within a minute.
func sweepHelper(mode, port string) {
	fmt.Println("helper", mode, "with token", os.Getenv("HF_TOKEN"))
	if mode == "exit" {
		fmt.Fprintln(os.Stderr, "fatal: CUDA out of memory")
		os.Exit(1)
	}
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() { time.Sleep(time.Minute); os.Exit(9) }()
	if mode == "never" {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if mode == "die" && served.Add(1) > 4 {
			os.Exit(3)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for range 4 {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"}}]}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n")
	})
	http.Serve(l, mux)
}

// sweepFile is what these tests read of sweep.json.
type sweepFile struct {
	Configs []struct {
		Name    string            `json:"name"`
		Params  map[string]string `json:"params"`
		Port    int               `json:"port"`
		PID     int               `json:"pid"`
		Startup *struct {
			PortOpenS    *float64 `json:"port_open_s"`
			ModelListedS *float64 `json:"model_listed_s"`
			FirstTokenS  *float64 `json:"first_token_s"`
			ReadyS       *float64 `json:"ready_s"`
		} `json:"startup"`
		Stop *struct {
			Killed bool `json:"killed"`
		} `json:"stop"`
		Error      *string `json:"error"`
		LogTail    string  `json:"log_tail"`
		RunDir     string  `json:"run_dir"`
		Saturation *struct {
			Concurrency int `json:"concurrency"`
		} `json:"saturation"`
		Points []struct{} `json:"points"`
	} `json:"configs"`
	Pareto []struct {
		Config string   `json:"config"`
		On     []string `json:"on"`
	} `json:"pareto"`
}

func readSweep(t *testing.T, dir string) sweepFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f sweepFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("sweep.json: %v", err)
	}
	return f
}

// noneLeft fails the test when a process of a configuration's group is
// still there, or its port still taken.
func noneLeft(t *testing.T, f sweepFile) {
	t.Helper()
	for _, c := range f.Configs {
		if c.PID > 0 && !errors.Is(syscall.Kill(-c.PID, 0), syscall.ESRCH) {
			t.Errorf("%s: a process of group %d is left", c.Name, c.PID)
			syscall.Kill(-c.PID, syscall.SIGKILL)
		}
		if c.Port > 0 {
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(c.Port)); err != nil {
				t.Errorf("%s: port %d is still taken", c.Name, c.Port)
			} else {
				l.Close()
			}
		}
	}
}

// The simulator as the launched server: each configuration's saturation
// is its slot count, its start-up is measured, and nothing is left.
func TestSweepSimulatorSaturationFollowsSlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	code, stdout, stderr := runEnv(t, nil, "sweep",
		"--serve", binary+" sim --addr 127.0.0.1:{port} --max-num-seqs {seqs} --time-scale 5",
		"--param", "seqs=2,4,8", "--concurrency", "1,{seqs},{seqs}*2", "--duration", "6s",
		"--prompt-tokens", "64", "--output-tokens", "64", "--ready-timeout", "30s", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	f := readSweep(t, dir)
	noneLeft(t, f)
	if len(f.Configs) != 3 {
		t.Fatalf("%d configurations, want 3", len(f.Configs))
	}
	for _, c := range f.Configs {
		if c.Error != nil {
			t.Errorf("%s failed: %s", c.Name, *c.Error)
			continue
		}
		st := c.Startup
		if st == nil || st.PortOpenS == nil || st.ModelListedS == nil || st.FirstTokenS == nil || st.ReadyS == nil ||
			!(*st.PortOpenS > 0 && *st.PortOpenS <= *st.ModelListedS && *st.ModelListedS <= *st.FirstTokenS && *st.FirstTokenS <= *st.ReadyS) {
			t.Errorf("%s: startup %+v, want every stage, in order", c.Name, st)
		}
		if c.Saturation == nil || strconv.Itoa(c.Saturation.Concurrency) != c.Params["seqs"] {
			if strings.Contains(stdout, "the simulator fell behind its clock") {
				t.Skipf("%s: saturation %+v, but this machine could not run the simulator on time:\n%s", c.Name, c.Saturation, stdout)
			}
			t.Errorf("%s: saturation %+v, want c=%s (the slots)", c.Name, c.Saturation, c.Params["seqs"])
		}
		if len(c.Points) != 3 {
			t.Errorf("%s: %d points, want 1, seqs and 2×seqs", c.Name, len(c.Points))
		}
		for _, name := range []string{"records.jsonl", "summary.json", "server.log", "report.html"} {
			if _, err := os.Stat(filepath.Join(c.RunDir, name)); err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
		}
	}
	if len(f.Pareto) == 0 {
		t.Error("no Pareto frontier")
	}
	if !strings.Contains(stdout, "Pareto frontier") || !strings.Contains(stderr, "stored in history") {
		t.Errorf("stdout lacks the frontier, or stderr the history:\n%s\n%s", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}

// Faults: a server that exits at once, one never ready, one that dies in
// the middle of the load, one that ignores SIGTERM; each recorded, the
// sweep going on, nothing left running. A credential the server prints is
// redacted in its log.
func TestSweepFaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "faults")
	code, stdout, stderr := runEnv(t, []string{"HF_TOKEN=hf_sweepsecret123"}, "sweep",
		"--serve", os.Args[0]+" -test.run=NONE {port}", "--env", sweepHelperEnv+"={mode}",
		"--param", "mode=exit,never,die,stubborn", "--ready-timeout", "2s", "--stop-grace", "1s",
		"--concurrency", "2", "--requests", "12", "--prompt-tokens", "8", "--output-tokens", "4",
		"--tokenizer", "cl100k_base", "--model", "m", "--no-telemetry", "--no-history", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d (one configuration ran: want 0)\n%s\n%s", code, stdout, stderr)
	}
	f := readSweep(t, dir)
	noneLeft(t, f)
	want := map[string]string{
		"exit":     "exited with status 1 before it was ready",
		"never":    "not ready after 2s: waiting for its model list",
		"die":      "exited with status 3 during the load",
		"stubborn": "",
	}
	if len(f.Configs) != len(want) {
		t.Fatalf("%d configurations, want %d: the sweep stopped early", len(f.Configs), len(want))
	}
	for _, c := range f.Configs {
		w := want[c.Params["mode"]]
		switch {
		case w == "" && c.Error != nil:
			t.Errorf("%s: error %q, want none", c.Name, *c.Error)
		case w != "" && (c.Error == nil || !strings.Contains(*c.Error, w)):
			t.Errorf("%s: error %v, want one saying %q", c.Name, c.Error, w)
		}
	}
	exit, stubborn := f.Configs[0], f.Configs[3]
	if !strings.Contains(exit.LogTail, "CUDA out of memory") {
		t.Errorf("exit: log tail %q, want the server's last words", exit.LogTail)
	}
	if stubborn.Stop == nil || !stubborn.Stop.Killed {
		t.Errorf("stubborn: stop %+v, want it killed after the grace", stubborn.Stop)
	}
	log, err := os.ReadFile(filepath.Join(dir, exit.Name, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "hf_sweepsecret123") || !strings.Contains(string(log), "[redacted]") {
		t.Errorf("server.log: %q, want the token redacted", log)
	}
	if strings.Contains(stdout+stderr, "hf_sweepsecret123") {
		t.Error("the token is printed")
	}
}

// A command that does not exist, and one whose fixed port is taken: every
// configuration failed, exit 1.
func TestSweepEveryConfigFailed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	dir := filepath.Join(t.TempDir(), "failed")
	code, stdout, stderr := runEnv(t, nil, "sweep",
		"--serve", "{prog} sim --addr "+taken+" --max-num-seqs 2", "--env", "UNUSED={port}",
		"--param", "prog=servebench-no-such-command,"+binary, "--ready-timeout", "5s", "--no-history", "--out", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	f := readSweep(t, dir)
	noneLeft(t, f)
	if len(f.Configs) != 2 || f.Configs[0].Error == nil || !strings.Contains(*f.Configs[0].Error, "could not be started") ||
		f.Configs[1].Error == nil || !strings.Contains(*f.Configs[1].Error, "before it was ready") ||
		!strings.Contains(f.Configs[1].LogTail, "address already in use") {
		t.Errorf("configurations: %+v", f.Configs)
	}
	if !strings.Contains(stderr, "every configuration failed") {
		t.Errorf("stderr: %s", stderr)
	}
}

// Ctrl-C stops the server being measured, as a sweep stops any, and ends
// the sweep: exit 130, sweep.json covering what ran, nothing left.
func TestSweepInterruptStopsTheServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "int")
	cmd := exec.Command(binary, "sweep", "--serve", binary+" sim --addr 127.0.0.1:{port} --max-num-seqs {seqs}",
		"--param", "seqs=2,4", "--concurrency", "2", "--duration", "60s", "--no-history", "--out", dir)
	var out bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = &out, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var stderr strings.Builder
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "seqs-2: ready in") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the first server was not ready within 30s")
	}
	time.Sleep(500 * time.Millisecond) // into the load point
	cmd.Process.Signal(os.Interrupt)
	code := cliExitCode(t, cmd)
	pw.Close()
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	f := readSweep(t, dir)
	noneLeft(t, f)
	if len(f.Configs) != 1 {
		t.Errorf("%d configurations in sweep.json, want the one interrupted", len(f.Configs))
	}
}

// --startup-only --repeat N: N cold starts per configuration, no load.
func TestSweepStartupOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cold")
	code, stdout, stderr := runEnv(t, nil, "sweep", "--serve", binary+" sim --addr 127.0.0.1:{port} --max-num-seqs {seqs}",
		"--param", "seqs=2,4", "--startup-only", "--repeat", "2", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var f struct {
		Configs []struct {
			PID      int `json:"pid"`
			Startups []struct {
				ReadyS *float64 `json:"ready_s"`
			} `json:"startups"`
			StartupSummary *struct {
				N int `json:"n"`
			} `json:"startup_summary"`
			Points []struct{} `json:"points"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(stdout), &f); err != nil {
		t.Fatalf("stdout is not sweep.json: %v\n%s", err, stdout)
	}
	for i, c := range f.Configs {
		if len(c.Startups) != 2 || c.StartupSummary == nil || c.StartupSummary.N != 2 || len(c.Points) != 0 || c.Startups[1].ReadyS == nil {
			t.Errorf("config %d: %+v, want two cold starts and no load", i, c)
		}
	}
	if len(f.Configs) != 2 {
		t.Errorf("%d configurations", len(f.Configs))
	}
	if strings.Contains(stderr, "stored in history") {
		t.Error("a start-up alone was stored as a run")
	}
}

// With an objective, the sweep recommends as decide does: of the
// configurations that meet it, the one on the fewest GPUs; none meeting
// it is exit 3.
func TestSweepObjective(t *testing.T) {
	sim := binary + " sim --addr 127.0.0.1:{port} --max-num-seqs {seqs} --time-scale 5"
	common := []string{"--concurrency", "{seqs}", "--requests", "20", "--prompt-tokens", "64", "--output-tokens", "32", "--no-history"}
	dir := filepath.Join(t.TempDir(), "meets")
	code, stdout, stderr := runEnv(t, nil, append([]string{"sweep", "--serve", sim, "--param", "seqs=8,2", "--gpus", "{seqs}/2",
		"--slo", "ttft p95 <= 5s", "--json", "--out", dir}, common...)...)
	if code == 4 {
		skipIfMachineBehind(t, stdout+stderr)
	}
	var f struct {
		Recommended string `json:"recommended"`
		Why         string `json:"why"`
		Configs     []struct {
			Meets *bool `json:"meets_objective"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(stdout), &f); err != nil {
		t.Fatalf("exit %d; stdout is not sweep.json: %v\n%s", code, err, stderr)
	}
	if code != 0 || f.Recommended != "seqs-2" || len(f.Configs) != 2 || f.Configs[0].Meets == nil || !*f.Configs[0].Meets {
		t.Errorf("exit %d, recommended %q (%s), configs %+v; want seqs-2, on 1 GPU against 4\n%s", code, f.Recommended, f.Why, f.Configs, stderr)
	}
	rejudgeSweep(t, dir)
	unmet := filepath.Join(t.TempDir(), "unmet")
	code, stdout, stderr = runEnv(t, nil, append([]string{"sweep", "--serve", sim, "--param", "seqs=2",
		"--slo", "ttft p95 <= 1ms", "--out", unmet}, common...)...)
	if code == 4 {
		skipIfMachineBehind(t, stdout+stderr)
	}
	if code != 3 || !strings.Contains(stdout, "No recommendation") {
		t.Errorf("an objective no configuration meets: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	reportSweepAgain(t, unmet, stdout)
}

// TestSweepLive: sweep --live serves one live view for the whole sweep;
// each configuration's run shows in it in turn, and at the end it holds
// the last configuration's points, equal to its summary.json.
func TestSweepLive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	lr := startLive(t, nil, "sweep", "--live", "--live-linger", "1m",
		"--serve", binary+" sim --addr 127.0.0.1:{port} --max-num-seqs {seqs} --time-scale 5",
		"--param", "seqs=2,4", "--concurrency", "1,{seqs}", "--requests", "16",
		"--prompt-tokens", "64", "--output-tokens", "32", "--ready-timeout", "30s", "--no-history", "--out", dir)
	if !strings.HasPrefix(lr.url, "http://127.0.0.1:") {
		t.Fatalf("sweep --live: got %q, want a loopback URL", lr.url)
	}
	end, _ := waitState(t, lr.url, "the sweep's end", func(s liveState) bool { return s.Status == "ended" })
	f := readSweep(t, dir)
	noneLeft(t, f)
	last := f.Configs[len(f.Configs)-1]
	if last.Error != nil {
		t.Fatalf("%s failed: %s", last.Name, *last.Error)
	}
	sameAsSummary(t, last.RunDir, end.Points)
	lr.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-lr.done:
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20 s after Ctrl-C in its linger")
	}
}

// A server that answers its model list without the --model asked for
// fails its configuration within seconds, saying so, not after
// --ready-timeout as a server that never answered.
func TestSweepWrongModelFailsFast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	code, stdout, stderr := runEnv(t, nil, "sweep",
		"--serve", binary+" sim --addr 127.0.0.1:{port}", "--model", "no-such-model", "--ready-timeout", "10m",
		"--concurrency", "1", "--requests", "4", "--no-history", "--out", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (every configuration failed)\n%s\n%s", code, stdout, stderr)
	}
	f := readSweep(t, dir)
	noneLeft(t, f)
	if c := f.Configs[0]; c.Error == nil || !strings.Contains(*c.Error, `waiting would not change it: the server at`) ||
		!strings.Contains(*c.Error, `does not serve model "no-such-model"; it serves: sim-llama-3.1-8b`) {
		t.Errorf("error %v, want the model refused", c.Error)
	}
}
