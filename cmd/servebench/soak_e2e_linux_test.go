package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The soak: the built binary against a streaming server in another process
// (this one), its resident memory sampled from /proc as the run goes, set
// against the requests it has completed (lines in records.jsonl). A client
// that kept what it measured per request grew by kilobytes a request
// (2.2 KB at 50 tokens); one whose memory is bounded by its load does not
// grow with the requests once its fixed-size summaries are full.
//
// By default a short soak guards it (a few hundred streams for 40 s, no
// timing asserted). SERVEBENCH_SOAK=10m (and SERVEBENCH_SOAK_STREAMS=1000)
// runs the long one and prints RSS over time: scripts/soak.sh.

// soakServer streams tokens tokens per request: the first after ttft, the
// others every gap, like a server under a steady load.
type soakServer struct {
	ttft, gap time.Duration
	tokens    int
}

func (s *soakServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"test"}]}`)
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	t := time.NewTimer(s.ttft)
	defer t.Stop()
	for i := range s.tokens {
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		finish := ""
		if i == s.tokens-1 {
			finish = `,"finish_reason":"length"`
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" t\"}%s}]}\n\n", finish)
		fl.Flush()
		t.Reset(s.gap)
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.tokens)
}

// soakSample is the client's resident memory after done requests.
type soakSample struct {
	at   time.Duration
	rss  int64 // bytes
	done int64
}

// rssOf reads VmRSS of a process.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// lineCounter counts the lines of a growing file.
type lineCounter struct {
	path string
	off  int64
	n    int64
}

func (c *lineCounter) count() int64 {
	f, err := os.Open(c.path)
	if err != nil {
		return c.n
	}
	defer f.Close()
	f.Seek(c.off, io.SeekStart)
	b, _ := io.ReadAll(f)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		c.n += int64(bytes.Count(b[:i+1], []byte{'\n'}))
		c.off += int64(i + 1)
	}
	return c.n
}

// soak runs the binary for d at streams concurrent streams and samples its
// memory every every.
func soak(t *testing.T, d time.Duration, streams int, srv *soakServer, every time.Duration) []soakSample {
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "soak")
	cmd := exec.Command(binary, "run", "--url", ts.URL, "--model", "m", "--concurrency", strconv.Itoa(streams),
		"--duration", d.String(), "--slice", (d / 10).String(), "--warmup", "0",
		"--prompt-tokens", "32", "--output-tokens", strconv.Itoa(srv.tokens), "--out", dir, "--no-history")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	lines := &lineCounter{path: filepath.Join(dir, "records.jsonl")}
	var out []soakSample
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			return out
		case <-tick.C:
			rss, err := rssOf(cmd.Process.Pid)
			if err != nil {
				continue // the process is ending
			}
			out = append(out, soakSample{at: time.Since(start), rss: rss, done: lines.count()})
		}
	}
}

// slope fits rss = a + b×done by least squares and returns b, bytes per
// completed request.
func slope(ss []soakSample) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, s := range ss {
		x, y := float64(s.done), float64(s.rss)
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// soakMaxSlope is the most a completed request may add to the client's
// memory after the first third of the soak: under half of the 2.2 KB that
// keeping each request's values cost at 50 tokens, and above what the
// fixed-size summaries still fill in a short soak (13 per-request figures
// of 8 bytes and the timeline's 40 bytes, until 16,384 requests), doubled
// by the garbage collector's headroom.
const soakMaxSlope = 1000

// TestSoakMemoryDoesNotGrowWithRequests: the client's memory, after the
// first third of a soak, does not grow with the requests it completes.
func TestSoakMemoryDoesNotGrowWithRequests(t *testing.T) {
	if os.Getenv("SERVEBENCH_SOAK") == "" {
		longTest(t, "a soak of 40 s")
	}
	d, streams := 40*time.Second, 300
	srv := &soakServer{ttft: 20 * time.Millisecond, gap: 2 * time.Millisecond, tokens: 50}
	if v := os.Getenv("SERVEBENCH_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("SERVEBENCH_SOAK=%q: %v", v, err)
		}
		streams = 1000
		if v := os.Getenv("SERVEBENCH_SOAK_STREAMS"); v != "" {
			streams, _ = strconv.Atoi(v)
		}
		srv = &soakServer{ttft: 200 * time.Millisecond, gap: 50 * time.Millisecond, tokens: 50}
	}
	every := max(d/200, 200*time.Millisecond)
	ss := soak(t, d, streams, srv, every)
	if len(ss) < 10 {
		t.Fatalf("%d memory samples", len(ss))
	}
	steady := ss[len(ss)/3:]
	first, last := steady[0], steady[len(steady)-1]
	b := slope(steady)
	report(t, ss, d)
	t.Logf("after %v: %d requests, RSS %.1f MB → %.1f MB over the last two thirds (%d requests): %.0f bytes a request",
		first.at.Round(time.Second), first.done, float64(first.rss)/1e6, float64(last.rss)/1e6, last.done-first.done, b)
	if n := last.done - first.done; n < 5000 {
		t.Skipf("only %d requests completed in the last two thirds: too few to tell growth from noise on this machine", n)
	}
	if b > soakMaxSlope {
		t.Errorf("memory grows by %.0f bytes a completed request after warm-up, more than %d: the client keeps what it measured per request", b, soakMaxSlope)
	}
}

// report prints RSS over time (a long soak's table, docs/PERFORMANCE.md)
// and writes it as JSON where SERVEBENCH_SOAK_OUT says.
func report(t *testing.T, ss []soakSample, d time.Duration) {
	step := max(len(ss)/10, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "| time | requests | RSS MB |\n|---|---|---|\n")
	for i := 0; i < len(ss); i += step {
		fmt.Fprintf(&b, "| %v | %d | %.0f |\n", ss[i].at.Round(time.Second), ss[i].done, float64(ss[i].rss)/1e6)
	}
	l := ss[len(ss)-1]
	fmt.Fprintf(&b, "| %v | %d | %.0f |\n", l.at.Round(time.Second), l.done, float64(l.rss)/1e6)
	t.Logf("soak of %v:\n%s", d, b.String())
	if p := os.Getenv("SERVEBENCH_SOAK_OUT"); p != "" {
		type row struct {
			S    float64 `json:"t_s"`
			Done int64   `json:"requests"`
			RSS  int64   `json:"rss_bytes"`
		}
		rows := make([]row, len(ss))
		for i, s := range ss {
			rows[i] = row{s.at.Seconds(), s.done, s.rss}
		}
		js, _ := json.Marshal(rows)
		os.WriteFile(p, js, 0o644)
	}
}
