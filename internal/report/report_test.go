package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

var update = flag.Bool("update", false, "rewrite golden files")

const msNS = int64(1e6)

// fixture builds a two-point summary from scripted records: at c=1 one
// request decodes at 50 tok/s; at c=2 two decode at 25 tok/s and one fails.
func fixture() *metrics.Summary {
	var a metrics.Aggregator
	add := func(point, conc int, id int64, sent, ttft, gap int64, n int) {
		a.Add(rec(point, conc, id, sent, ttft, gap, n))
	}
	add(0, 1, 0, 0, 100, 20, 11)
	// A warm-up request before c=1: cold, slow to start.
	a.Add(&record.Record{Schema: record.Schema, Point: 0, Load: record.Load{Concurrency: 1}, ID: 9,
		Phase: record.PhaseWarmup, API: "openai-chat", SentNS: 0, FirstTokenNS: 800 * msNS, EndNS: 900 * msNS,
		OutputTokens: 3, Chunks: []record.Chunk{{AtNS: 800 * msNS, Tokens: 1}, {AtNS: 850 * msNS, Tokens: 1}, {AtNS: 900 * msNS, Tokens: 1}}})
	add(0, 1, 1, 300, 110, 20, 11)
	add(1, 2, 2, 1000, 150, 40, 11)
	add(1, 2, 3, 1000, 170, 40, 11)
	a.Add(&record.Record{Schema: record.Schema, Point: 1, Load: record.Load{Concurrency: 2}, ID: 4,
		Phase: record.PhaseMeasured, SentNS: 1600 * msNS, EndNS: 1650 * msNS,
		Error: &record.Error{Class: record.ClassHTTP5xx, Status: 503, Message: "overloaded"}})
	run := &record.Run{Schema: record.RunSchema, Version: "test", Started: "2026-01-02T03:04:05Z",
		Target:       record.Target{URL: "http://127.0.0.1:8000", API: "openai-chat", Model: "llama"},
		PromptTokens: "512", OutputTokens: "11", Seed: 7,
		Points: []record.PointClient{{Index: 0, Load: record.Load{Concurrency: 1}, Client: record.ClientStats{Sent: 2}}}}
	return metrics.Summarize(run, &a)
}

func TestGolden(t *testing.T) {
	for name, r := range Formats {
		var buf bytes.Buffer
		if err := r(&buf, fixture()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join("testdata", "summary."+name+".golden")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test -update)", name, err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s output differs from %s:\n%s", name, path, buf.String())
		}
	}
}

// TestTextShowsTheNumbers asserts the table's cells against the script,
// independently of the golden file.
func TestTextShowsTheNumbers(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, fixture()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	var c1, c2 []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "c=1" {
			c1 = f
		}
		if len(f) > 0 && f[0] == "c=2" {
			c2 = f
		}
	}
	// window 0..610 ms: 22 tokens → 36.1 tok/s, 2 requests → 196.7/min.
	// load, speed p50 p95, aggregate, prefill p50, ttft p50 p95 p99, itl p95 p99, e2e p95 p99, req/min, ok, errors
	want1 := []string{"c=1", "50.0", "50.0", "36.1", "4887", "105", "110", "110", "20.0", "20.0", "310", "310", "196.7", "2", "0"}
	if strings.Join(c1, " ") != strings.Join(want1, " ") {
		t.Errorf("c=1 row:\n got %q\nwant %q", c1, want1)
	}
	if len(c2) < 16 || c2[1] != "25.0" || c2[13] != "2" || c2[14] != "1" || c2[15] != "(33.3%)" {
		t.Errorf("c=2 row: %q", c2)
	}
}

func TestTextShowsColdStart(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, fixture()); err != nil {
		t.Fatal(err)
	}
	want := "c=1: 1 requests (0 failed), first TTFT 800 ms, TTFT p50 800 ms, decode p50 20.0 tok/s"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("cold-start line missing:\n%s", buf.String())
	}
}

func TestJSONContract(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, fixture()); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Schema string `json:"schema"`
		Points []map[string]json.RawMessage
	}
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Schema != "servebench.summary/v1" {
		t.Errorf("schema %q", v.Schema)
	}
	for _, k := range []string{"load", "requests", "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "queue_ms",
		"decode_tps_per_request", "output_tps", "input_tps", "request_rate"} {
		if _, ok := v.Points[0][k]; !ok {
			t.Errorf("point lacks %q", k)
		}
	}
	var d map[string]any
	_ = json.Unmarshal(v.Points[0]["ttft_ms"], &d)
	for _, k := range []string{"mean", "p50", "p90", "p95", "p99", "p999", "max", "count"} {
		if _, ok := d[k]; !ok {
			t.Errorf("ttft_ms lacks %q", k)
		}
	}
}

// A point that did not hold its load shows what it reached beside the
// nominal load; one that held it, or measured nothing, shows the load only.
func TestLoadCellShowsAchievedLoad(t *testing.T) {
	tests := []struct {
		p    metrics.PointSummary
		want string
	}{
		{metrics.PointSummary{Load: record.Load{Concurrency: 4}, LoadHeld: true, Requests: metrics.Requests{Completed: 40}}, "c=4"},
		{metrics.PointSummary{Load: record.Load{Concurrency: 64}, ConcurrencyAchieved: 6.34, Requests: metrics.Requests{Completed: 10}}, "c=64 (6.3 in flight)"},
		{metrics.PointSummary{Load: record.Load{Rate: 100, MaxConcurrency: 2}, AchievedRate: 20.41, Requests: metrics.Requests{Completed: 10}}, "r=100/s ≤2 (20.4/s sent)"},
		{metrics.PointSummary{Load: record.Load{Concurrency: 4}, AllFailed: true, Requests: metrics.Requests{Failed: 4}}, "c=4"},
	}
	for _, tt := range tests {
		if got := loadCell(&tt.p); got != tt.want {
			t.Errorf("loadCell = %q, want %q", got, tt.want)
		}
	}
}

// Cancelled requests show in the errors column: an interrupted point whose
// requests were all cancelled does not read as "0" errors.
func TestErrorsCellCountsCancelled(t *testing.T) {
	tests := []struct {
		r    metrics.Requests
		rate float64
		want string
	}{
		{metrics.Requests{Completed: 10}, 0, "0"},
		{metrics.Requests{Cancelled: 201}, 1, "0 +201 cancelled"},
		{metrics.Requests{Completed: 8, Failed: 2, Cancelled: 3}, 0.2, "2 (20.0%) +3 cancelled"},
	}
	for _, tt := range tests {
		if got := errorsCell(&metrics.PointSummary{Requests: tt.r, ErrorRate: tt.rate}); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
	}
}
