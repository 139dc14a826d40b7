package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// telemetrySample is the part of a telemetry.jsonl line these tests read.
type telemetrySample struct {
	TNS    int64  `json:"t_ns"`
	Source string `json:"source"`
	Event  *struct {
		Kind   string `json:"kind"`
		Source string `json:"source"`
	} `json:"event"`
}

// telemetryRecord is the part of a record these tests read.
type telemetryRecord struct {
	Point   int    `json:"point"`
	Phase   string `json:"phase"`
	SchedNS int64  `json:"scheduled_ns"`
	SentNS  int64  `json:"sent_ns"`
	EndNS   int64  `json:"end_ns"`
}

func telemetryJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// telemetrySummary is the part of summary.json these tests read.
type telemetrySummary struct {
	Points []struct {
		Telemetry *struct {
			Server *struct {
				RunningRaw json.RawMessage `json:"running"`
				WaitingRaw json.RawMessage `json:"waiting"`
				KVRaw      json.RawMessage `json:"kv_cache_usage"`
			} `json:"server"`
			Events map[string]int `json:"events"`
		} `json:"telemetry"`
	} `json:"points"`
	Warnings []string `json:"warnings"`
}

// The default simulator run samples its /metrics: telemetry.jsonl's
// times lie on the records' clock (every point's window holds readings,
// none lies past the last record by more than the run's end takes), and
// every point of summary.json has the server's running, waiting and KV
// cache; the table shows the peak KV-cache column.
func TestSimulatorTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, out, stderr := run(t, "run", "--concurrency", "1,4", "--requests", "16", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "KV cache") || !strings.Contains(out, "Telemetry over each point's window") {
		t.Errorf("the table has no KV-cache column or telemetry table:\n%s", out)
	}
	recs := jsonLines[telemetryRecord](t, filepath.Join(dir, "records.jsonl"))
	samples := jsonLines[telemetrySample](t, filepath.Join(dir, "telemetry.jsonl"))
	var last int64
	windows := map[int][2]int64{}
	for _, r := range recs {
		last = max(last, r.EndNS)
		if r.Phase == "warmup" {
			continue
		}
		w, ok := windows[r.Point]
		if !ok {
			w = [2]int64{r.SentNS, r.EndNS}
		}
		windows[r.Point] = [2]int64{min(w[0], r.SentNS), max(w[1], r.EndNS)}
	}
	// the sampler stops when the run closes, moments after the last record
	const closing = int64(time.Second)
	for _, s := range samples {
		if s.TNS < 0 || s.TNS > last+closing {
			t.Errorf("sample at t_ns %d outside the records' span [0, %d] (+1 s to close)", s.TNS, last)
		}
	}
	for p, w := range windows {
		in := 0
		for _, s := range samples {
			if s.Source == "server" && s.TNS >= w[0] && s.TNS <= w[1] {
				in++
			}
		}
		if in == 0 {
			t.Errorf("point %d: no server reading inside its window %v", p, w)
		}
	}
	var sum telemetrySummary
	telemetryJSON(t, filepath.Join(dir, "summary.json"), &sum)
	for i, p := range sum.Points {
		if p.Telemetry == nil || p.Telemetry.Server == nil || p.Telemetry.Server.RunningRaw == nil ||
			p.Telemetry.Server.WaitingRaw == nil || p.Telemetry.Server.KVRaw == nil {
			t.Errorf("point %d: telemetry %+v, want server running, waiting and kv_cache_usage", i, p.Telemetry)
		}
	}
}

// --no-telemetry samples nothing: no telemetry.jsonl, no telemetry in
// summary.json, no telemetry columns.
func TestTelemetryNoTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, out, stderr := run(t, "run", "--no-telemetry", "--concurrency", "2", "--requests", "8", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "telemetry.jsonl")); !os.IsNotExist(err) {
		t.Errorf("telemetry.jsonl written with --no-telemetry (%v)", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"telemetry"`) || strings.Contains(out, "KV cache") {
		t.Errorf("telemetry shown with --no-telemetry:\n%s", out)
	}
}

// telemetryVLLM is a vLLM /metrics page: two slots running, one waiting.
const telemetryVLLM = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 2
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 1
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} 0.5
`

// telemetryMetricsServer serves telemetryVLLM after sleeping delay, counting the
// scrapes it began.
func telemetryMetricsServer(t *testing.T, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	var scrapes atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, telemetryVLLM)
	}))
	t.Cleanup(hs.Close)
	return hs, &scrapes
}

// A --metrics-url that goes away mid-run: the run completes every
// request, and the scrape failure and the gap are events on the timeline,
// listed in the summary's warnings and in the point's telemetry.
func TestTelemetryMetricsURLDisappears(t *testing.T) {
	target := httptest.NewServer(&slowServer{gap: 15 * time.Millisecond, tokens: 5})
	defer target.Close()
	metrics, scrapes := telemetryMetricsServer(t, 0)
	go func() {
		for scrapes.Load() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		metrics.Close() // gone for the rest of the run
	}()
	dir := filepath.Join(t.TempDir(), "r")
	code, out, stderr := run(t, loadArgs(t, target.URL, dir, "--concurrency", "1", "--requests", "25",
		"--metrics-url", metrics.URL+"/metrics", "--sample-interval", "40ms")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := loadRecords(t, dir)[""]; n != 25 {
		t.Errorf("%d requests completed, want all 25", n)
	}
	var kinds []string
	for _, s := range jsonLines[telemetrySample](t, filepath.Join(dir, "telemetry.jsonl")) {
		if s.Event != nil && strings.HasPrefix(s.Event.Source, "server metrics at "+metrics.URL) {
			kinds = append(kinds, s.Event.Kind)
		}
	}
	if !slices.Contains(kinds, "scrape_failed") || !slices.Contains(kinds, "gap") {
		t.Errorf("events of the vanished endpoint %v, want scrape_failed and gap", kinds)
	}
	// One failure when the endpoint goes; a busy machine can also time out
	// a scrape before it goes, so the figures are held to the events the
	// file has rather than to exactly one.
	failed := 0
	for _, k := range kinds {
		if k == "scrape_failed" {
			failed++
		}
	}
	var sum telemetrySummary
	telemetryJSON(t, filepath.Join(dir, "summary.json"), &sum)
	listed := strings.Join(sum.Warnings, "\n")
	if !strings.Contains(listed, fmt.Sprintf("telemetry: %d scrape_failed event", failed)) || !strings.Contains(listed, "gap event") {
		t.Errorf("summary warnings do not list the %d scrape_failed events:\n%s", failed, listed)
	}
	if ev := sum.Points[0].Telemetry; ev == nil || ev.Events["scrape_failed"] != failed {
		t.Errorf("point telemetry %+v, want %d scrape_failed events", ev, failed)
	}
	if !strings.Contains(out, "scrape_failed") {
		t.Errorf("the table's output does not list the events:\n%s", out)
	}
}

// A /metrics slower than the sample interval delays no request: the
// client's E2E from the schedule (a send held up counts), against a
// server whose every answer takes the same
// scripted time, has the same median with and without the slow scrape
// (within a margin far below the scrape's 500 ms), and the slow page was
// indeed scraped during the run.
func TestTelemetrySlowMetricsDoesNotDelayRequests(t *testing.T) {
	e2e := func(extra ...string) (time.Duration, string) {
		target := httptest.NewServer(&slowServer{gap: 10 * time.Millisecond, tokens: 5})
		defer target.Close()
		dir := filepath.Join(t.TempDir(), "r")
		args := loadArgs(t, target.URL, dir, append([]string{"--concurrency", "2", "--requests", "30", "--sample-interval", "50ms"}, extra...)...)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var d []time.Duration
		for _, r := range jsonLines[telemetryRecord](t, filepath.Join(dir, "records.jsonl")) {
			d = append(d, time.Duration(r.EndNS-r.SchedNS)) // from the schedule: a late send counts
		}
		slices.Sort(d)
		return d[len(d)/2], dir
	}
	slow, scrapes := telemetryMetricsServer(t, 500*time.Millisecond)
	base, _ := e2e("--no-telemetry")
	withSlow, dir := e2e("--metrics-url", slow.URL+"/metrics")
	if scrapes.Load() < 2 {
		t.Fatalf("the slow /metrics was scraped %d times during the run, want at least 2", scrapes.Load())
	}
	const margin = 150 * time.Millisecond
	if withSlow > base+margin {
		t.Errorf("E2E p50 %v with a slow /metrics, %v without: requests were delayed", withSlow, base)
	}
	// the slow scrape missed its deadline: an event, not a stall
	failed := false
	for _, s := range jsonLines[telemetrySample](t, filepath.Join(dir, "telemetry.jsonl")) {
		failed = failed || (s.Event != nil && s.Event.Kind == "scrape_failed")
	}
	if !failed {
		t.Error("no scrape_failed event for a /metrics slower than the sample interval")
	}
}
