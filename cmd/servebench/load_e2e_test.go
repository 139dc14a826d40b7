package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Fault-matrix cases of the load generator: a server that is not there, one
// killed mid-run, and one that never answers an open loop. Each checks the
// error class, the counts, one record per request sent, the exit code, the
// message and that the run ends in bounded time.

// loadArgs is a run against url with small requests; a preflight, where the
// binary has one, is skipped so that the load itself meets the fault.
func loadArgs(t *testing.T, url, dir string, extra ...string) []string {
	t.Helper()
	args := []string{"run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--prompt-tokens", "8", "--output-tokens", "5", "--tokenizer", "cl100k_base", "--out", dir}
	if _, _, help := run(t, "run", "-h"); strings.Contains(help, "--no-preflight") || strings.Contains(help, "-no-preflight") {
		args = append(args, "--no-preflight")
	}
	return append(args, extra...)
}

// loadRecords reads records.jsonl: the count of records per error class
// ("" for successes).
func loadRecords(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Error *struct{ Class string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("records.jsonl line %q: %v", line, err)
		}
		if r.Error == nil {
			classes[""]++
		} else {
			classes[r.Error.Class]++
		}
	}
	return classes
}

// loadSent reads how many requests run.json says each point sent, summed.
func loadSent(t *testing.T, dir string) (sent, dropped int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Points []struct {
			Client struct{ Sent, Dropped int }
		}
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	for _, p := range run.Points {
		sent += p.Client.Sent
		dropped += p.Client.Dropped
	}
	return sent, dropped
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// loadDeadPort returns an address nothing listens on.
func loadDeadPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// Connection refused, with a --duration that would otherwise send tens of
// thousands of requests: the point stops after a run of connection
// failures, says why and where, exits 1, and records each request sent.
func TestLoadConnectionRefusedStopsThePoint(t *testing.T) {
	url := loadDeadPort(t)
	dir := filepath.Join(t.TempDir(), "r")
	start := time.Now()
	code, _, stderr := run(t, loadArgs(t, url, dir, "--concurrency", "4", "--duration", "30s")...)
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("run took %v against a dead server", el)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"cannot reach " + url, "failed to connect", "connection refused", "requests sent, each recorded"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	classes := loadRecords(t, dir)
	sent, _ := loadSent(t, dir)
	if classes["connect"] != sum(classes) || sent != sum(classes) || sent < 20 || sent > 30 {
		t.Errorf("records by class %v, run.json sent %d: want about 20 connect failures, one record per request sent", classes, sent)
	}
}

// loadKillable is a server on its own listener that can be killed: the
// listener closes (new connections are refused) and open connections drop.
type loadKillable struct {
	srv  *http.Server
	url  string
	done atomic.Int64
}

func loadStartKillable(t *testing.T, gap time.Duration) *loadKillable {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &loadKillable{url: "http://" + l.Addr().String()}
	s := &slowServer{gap: gap, tokens: 5}
	k.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		k.done.Store(s.done.Load())
	})}
	go k.srv.Serve(l)
	t.Cleanup(func() { k.srv.Close() })
	return k
}

// Server killed mid-run: the requests in flight fail, the next ones cannot
// connect, the point stops; the records so far are kept, the summary is
// written, and the run exits 1 with the message.
func TestLoadServerKilledMidRun(t *testing.T) {
	k := loadStartKillable(t, 5*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "r")
	go func() {
		for k.done.Load() < 20 {
			time.Sleep(5 * time.Millisecond)
		}
		k.srv.Close()
	}()
	start := time.Now()
	code, _, stderr := run(t, loadArgs(t, k.url, dir, "--concurrency", "4", "--requests", "100000")...)
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("run took %v after the server died", el)
	}
	// The last failure is "connection refused", or "EOF" on a kept-alive
	// connection the dying server closed.
	if code != 1 || !strings.Contains(stderr, "cannot reach "+k.url) || !strings.Contains(stderr, "failed to connect") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and the connection error", code, stderr)
	}
	classes := loadRecords(t, dir)
	sent, _ := loadSent(t, dir)
	if classes[""] < 20 || classes["connect"] < 20 || sent != sum(classes) || sent > int(k.done.Load())+40 {
		t.Errorf("records by class %v, run.json sent %d, server completed %d: want the completed ones kept, about 20 connect failures, one record per request sent",
			classes, sent, k.done.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("summary.json: %v", err)
	}
}

// A stalled open loop: the server accepts every request and never answers.
// With the default 10-minute timeout the run must still end soon after the
// last arrival (the drain), every request recorded as a timeout, and the
// point reported as overloaded with its evidence.
func TestLoadStalledOpenLoopEnds(t *testing.T) {
	url, got := stalledServer(t)
	dir := filepath.Join(t.TempDir(), "r")
	start := time.Now()
	// 40 arrivals at 100/s: the last at 0.39 s, then a 1 s drain.
	code, stdout, stderr := run(t, loadArgs(t, url, dir, "--rate", "100", "--arrival", "constant", "--requests", "40", "--grace", "1s", "--json")...)
	el := time.Since(start)
	if el > 6*time.Second {
		t.Errorf("a stalled open loop ran %v; want about 1.4 s (last arrival + drain)", el)
	}
	classes := loadRecords(t, dir)
	sent, _ := loadSent(t, dir)
	if classes["timeout_first"] != 40 || sum(classes) != 40 || sent != 40 || got.Load() != 40 {
		t.Errorf("records by class %v, sent %d, server saw %d: want 40 first-token timeouts, one per request sent", classes, sent, got.Load())
	}
	var sum struct {
		Points []struct {
			Requests  struct{ Completed, Failed, Cancelled int }
			ErrorRate float64 `json:"error_rate"`
			Overload  *struct {
				Reason        string
				InFlightStart int `json:"in_flight_start"`
				InFlightEnd   int `json:"in_flight_end"`
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Points) != 1 {
		t.Fatalf("stdout is not a one-point summary (%v): %s\n%s", err, stdout, stderr)
	}
	p := sum.Points[0]
	if p.Requests.Failed != 40 || p.ErrorRate != 1 || p.Overload == nil || p.Overload.InFlightEnd != 40 || p.Overload.InFlightStart >= 40 {
		t.Errorf("point %+v overload %+v: want 40 failed, error rate 1, overloaded with in flight growing to 40", p, p.Overload)
	}
	// every request failed: exit 1 after writing the files
	if code != 1 || !strings.Contains(stderr, "failed") {
		t.Errorf("exit %d, stderr %q: want 1 and the failure", code, stderr)
	}
}

// With a concurrency cap the server cannot keep up with, arrivals that
// find the cap full until the point's last arrival are dropped and
// counted, not sent late: the point ends on time and the warning names the
// cap and the server.
func TestLoadCapDropsArrivals(t *testing.T) {
	s := &slowServer{gap: 20 * time.Millisecond, tokens: 5} // 100 ms a request
	srv := &http.Server{Handler: s}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	start := time.Now()
	// 50 arrivals over 0.49 s; 2 places at 100 ms serve about 20/s.
	code, stdout, stderr := run(t, loadArgs(t, "http://"+l.Addr().String(), dir,
		"--rate", "100", "--arrival", "constant", "--requests", "50", "--max-concurrency", "2")...)
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("a 0.5 s point ran %v", el)
	}
	if code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
	classes := loadRecords(t, dir)
	sent, dropped := loadSent(t, dir)
	if sent != sum(classes) || sent+dropped != 50 || dropped < 30 || classes[""] != sent {
		t.Errorf("records %v, sent %d, dropped %d: want every sent request recorded and completed, about 38 dropped", classes, sent, dropped)
	}
	if !strings.Contains(stdout, "were dropped, not sent late: the server held all 2 places of --max-concurrency") ||
		strings.Contains(stdout, "client sent") {
		t.Errorf("warning does not blame the cap and the server:\n%s\n%s", stdout, stderr)
	}
}

// --concurrency 64 --requests 10 cannot hold 64 users: the point says
// how many were in flight and is flagged, never claimed as c=64.
func TestLoadConcurrencyNotHeld(t *testing.T) {
	code, stdout, stderr := run(t, "run", "--concurrency", "64", "--requests", "10", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Points []struct {
			Achieved float64  `json:"concurrency_achieved"`
			Held     *bool    `json:"load_held"`
			Warnings []string `json:"warnings"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Points) != 1 {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}
	p := sum.Points[0]
	if p.Held == nil || *p.Held || p.Achieved > 10 || !strings.Contains(strings.Join(p.Warnings, " "), "load not held") {
		t.Errorf("c=64 with 10 requests: achieved %v, held %v, warnings %q", p.Achieved, p.Held, p.Warnings)
	}
}

// stalledServer accepts completions and never answers them (the model list
// 404s, so the preflight lets it pass): its URL, and how many requests it
// saw. It is closed when the test ends.
func stalledServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	got := new(atomic.Int64)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			http.NotFound(w, r)
			return
		}
		got.Add(1)
		<-r.Context().Done()
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String(), got
}
