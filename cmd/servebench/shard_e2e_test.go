package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The scripted server's answer: the first token shardTTFT after the
// request arrives, then shardTokens-1 more, shardGap apart, whoever sends
// it and however many are in flight, so that one process and four see the
// same server and any difference in their figures is the client's.
const (
	shardTTFT   = 20 * time.Millisecond
	shardGap    = 5 * time.Millisecond
	shardTokens = 5
)

func shardServe(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/completions") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	time.Sleep(shardTTFT)
	for i := range shardTokens {
		if i > 0 {
			time.Sleep(shardGap)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t%d\"}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", shardTokens)
}

// shardArgs are a run's flags against url, writing to dir.
func shardArgs(url, dir string, extra ...string) []string {
	return append([]string{"run", "--url", url, "--api", "openai-completions", "--model", "m", "--no-preflight",
		"--prompt-tokens", "8", "--output-tokens", strconv.Itoa(shardTokens), "--tokenizer", "cl100k_base",
		"--no-telemetry", "--out", dir, "--json"}, extra...)
}

// shardStart starts n workers of one run with args, each with its shard and
// its own directory under root, all starting at one mark.
func shardStart(t *testing.T, url, root string, n int, lead time.Duration, extra ...string) ([]*exec.Cmd, []string) {
	t.Helper()
	mark := time.Now().Add(lead).UTC().Format(time.RFC3339Nano)
	var cmds []*exec.Cmd
	var dirs []string
	for i := range n {
		dir := filepath.Join(root, "worker-"+strconv.Itoa(i))
		args := shardArgs(url, dir, append([]string{"--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", mark}, extra...)...)
		cmd := exec.Command(binary, args...)
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		cmds, dirs = append(cmds, cmd), append(dirs, dir)
	}
	return cmds, dirs
}

// shardWait waits for workers to exit 0.
func shardWait(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, c.Stderr.(*bytes.Buffer).String())
		}
	}
}

// shardSummary is what the tests read of a summary, merged or not.
type shardSummary struct {
	Points []struct {
		Load     struct{ Concurrency int }
		Requests struct{ Completed, Failed int }
		TTFT     map[string]float64 `json:"ttft_ms"`
		E2E      map[string]float64 `json:"e2e_ms"`
		TPOT     map[string]float64 `json:"tpot_ms"`
		Achieved float64            `json:"achieved_rate"`
	}
	Run struct {
		Workers []struct {
			Index         int
			Records       int
			Finished      bool
			StartOffsetMS float64 `json:"start_offset_ms"`
			Points        []struct {
				Idle   bool
				Client struct {
					Sent       int
					CPUPercent float64 `json:"cpu_percent_of_one_core"`
				}
			}
		}
	}
	Warnings []string
}

func shardDecode(t *testing.T, what, js string) shardSummary {
	t.Helper()
	var s shardSummary
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("%s: not summary JSON: %v\n%s", what, err, js)
	}
	return s
}

// Four workers of a closed loop, merged, count every request once and
// show the percentiles one process shows against the same server. The
// server's script is fixed, so the two differ only by the client's own
// delays on a loaded two-core machine (five servebench processes instead
// of one, beside whatever else runs): timer and scheduler wake-ups, a few
// milliseconds, and now and then a stall of tens of milliseconds that
// reaches a p90 of 50 requests. The tolerance is 15 ms plus 15% of the
// figure at p50, 40 ms plus 40% at p90. The mistakes a merge can make move
// a percentile by far more: a record's instants moved by different shifts
// are off by the distance between a worker's epoch and the mark (about
// 4 s here), and a lost or doubled record changes the exact counts.
func TestShardFourWorkersMatchOneProcess(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(shardServe))
	defer srv.Close()
	root := t.TempDir()
	// 50 requests for 8 users: quotas of 7 and 6, so the workers' shares
	// are uneven (13, 13, 12, 12).
	load := []string{"--concurrency", "1,8", "--requests", "50"}
	code, stdout, stderr := run(t, shardArgs(srv.URL, filepath.Join(root, "one"), load...)...)
	if code != 0 {
		t.Fatalf("one process: exit %d\n%s", code, stderr)
	}
	one := shardDecode(t, "one process", stdout)
	cmds, dirs := shardStart(t, srv.URL, root, 4, 4*time.Second, append(load, "--start-every", "4s")...)
	shardWait(t, cmds)
	out := filepath.Join(root, "merged")
	code, _, stderr = run(t, append([]string{"report", "--json", "--out", out}, dirs...)...)
	if code != 0 {
		t.Fatalf("report of four workers: exit %d\n%s", code, stderr)
	}
	// The merged run's directory reports as any run does.
	code, stdout, stderr = run(t, "report", "--json", out)
	if code != 0 {
		t.Fatalf("report of the merged directory: exit %d\n%s", code, stderr)
	}
	merged := shardDecode(t, "merged", stdout)
	if len(merged.Points) != 2 || len(merged.Run.Workers) != 4 {
		t.Fatalf("merged: %d points, %d workers; want 2, 4", len(merged.Points), len(merged.Run.Workers))
	}
	for i, p := range merged.Points {
		if p.Requests.Completed != 50 || p.Requests.Failed != 0 {
			t.Errorf("c=%d: %+v, want 50 completed exactly", p.Load.Concurrency, p.Requests)
		}
		o := one.Points[i]
		for _, m := range []struct {
			name     string
			got, ref map[string]float64
		}{{"ttft", p.TTFT, o.TTFT}, {"e2e", p.E2E, o.E2E}, {"tpot", p.TPOT, o.TPOT}} {
			for q, k := range map[string]float64{"p50": 15, "p90": 40} {
				d, tol := math.Abs(m.got[q]-m.ref[q]), k+k/100*m.ref[q]
				t.Logf("c=%d %s %s: merged %.2f ms, one process %.2f ms", p.Load.Concurrency, m.name, q, m.got[q], m.ref[q])
				if d > tol {
					t.Errorf("c=%d %s %s: merged %.1f ms, one process %.1f ms: %.1f apart, tolerance %.1f",
						p.Load.Concurrency, m.name, q, m.got[q], m.ref[q], d, tol)
				}
			}
		}
	}
	// c=1 on four workers: worker 0 runs the one user, the others idle.
	sent := 0
	for _, w := range merged.Run.Workers {
		sent += w.Records
		if idle := w.Points[0].Idle; idle != (w.Index != 0) || !w.Finished {
			t.Errorf("worker %d: idle at c=1 %v, finished %v", w.Index, idle, w.Finished)
		}
		if math.Abs(w.StartOffsetMS) > 1000 {
			t.Errorf("worker %d started %.0f ms off the mark", w.Index, w.StartOffsetMS)
		}
	}
	if sent != 100 {
		t.Errorf("the workers' records add up to %d, want 100", sent)
	}
}

// Four workers of an open loop at a constant 80 req/s send the one
// schedule between them: the merged achieved rate, over every send on the
// merged clock, is within 1% of the target. The workers start at one mark;
// 1% of the 6 s schedule is 60 ms, several times the wake-up lateness of a
// worker on the loaded machine (about 12 ms at a load average of 6).
func TestShardOpenLoopRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(shardServe))
	defer srv.Close()
	cmds, dirs := shardStart(t, srv.URL, t.TempDir(), 4, 4*time.Second,
		"--rate", "80", "--arrival", "constant", "--requests", "480")
	shardWait(t, cmds)
	code, stdout, stderr := run(t, append([]string{"report", "--json"}, dirs...)...)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	s := shardDecode(t, "merged", stdout)
	p := s.Points[0]
	if p.Requests.Completed != 480 {
		t.Errorf("completed %d, want 480", p.Requests.Completed)
	}
	t.Logf("merged achieved rate %.4f req/s of 80", p.Achieved)
	for _, w := range s.Run.Workers {
		t.Logf("worker %d: start offset %.2f ms", w.Index, w.StartOffsetMS)
	}
	if math.Abs(p.Achieved-80)/80 > 0.01 {
		t.Errorf("merged achieved rate %.3f req/s, want 80 within 1%%", p.Achieved)
	}
	for _, w := range s.Run.Workers {
		if got := w.Points[0].Client.Sent; got != 120 {
			t.Errorf("worker %d sent %d, want its 120 of 480", w.Index, got)
		}
	}
}

// A worker killed mid-run is named by the merge: refused without
// --partial, a warning with it; a worker whose directory is not given is
// named too.
func TestShardKilledWorkerNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(shardServe))
	defer srv.Close()
	cmds, dirs := shardStart(t, srv.URL, t.TempDir(), 4, 3*time.Second,
		"--rate", "40", "--arrival", "constant", "--requests", "200")
	shardWaitRecords(t, filepath.Join(dirs[2], "records.jsonl"), 5)
	if err := cmds[2].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmds[2].Wait()
	shardWait(t, append(cmds[:2:2], cmds[3]))
	code, _, stderr := run(t, append([]string{"report"}, dirs...)...)
	if code != 1 || !strings.Contains(stderr, "worker 2 ("+dirs[2]+") did not finish") || !strings.Contains(stderr, "--partial") {
		t.Errorf("merge with a killed worker: exit %d, stderr %q; want exit 1 naming worker 2 and --partial", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "merged")
	code, stdout, stderr := run(t, append([]string{"report", "--json", "--partial", "--out", out}, dirs...)...)
	if code != 0 {
		t.Fatalf("--partial: exit %d\n%s", code, stderr)
	}
	s := shardDecode(t, "partial", stdout)
	if len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0], "worker 2 ("+dirs[2]+") did not finish") {
		t.Errorf("partial merge's first warning does not name worker 2: %q", s.Warnings)
	}
	// Its merged directory, reported later, still says so.
	_, stdout, _ = run(t, "report", out)
	if !strings.Contains(stdout, "partial merge: worker 2 ("+dirs[2]+") did not finish") {
		t.Errorf("report of the partial merge's directory does not name worker 2:\n%s", stdout)
	}
	if got := s.Points[0].Requests.Completed; got >= 200 || got < 150 {
		t.Errorf("partial merge: %d completed; want the three workers' 150 and what worker 2 wrote", got)
	}
	code, _, stderr = run(t, "report", dirs[0], dirs[1], dirs[3])
	if code != 1 || !strings.Contains(stderr, "worker 2 of 4 missing") {
		t.Errorf("merge without worker 2's directory: exit %d, stderr %q", code, stderr)
	}
}

// shardWaitRecords waits until path holds n lines.
func shardWaitRecords(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if f, err := os.Open(path); err == nil {
			lines := 0
			for sc := bufio.NewScanner(f); sc.Scan(); {
				lines++
			}
			f.Close()
			if lines >= n {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: fewer than %d records after 30 s", path, n)
}
