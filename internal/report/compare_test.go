package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// compareRun is the run.json of a llama.cpp server with a q4_K_M build.
func compareRun() *record.Run {
	return &record.Run{Schema: record.RunSchema, PromptTokens: "512", OutputTokens: "128", IgnoreEOS: true,
		Target: record.Target{URL: "http://gpu-a:8000", API: "openai-chat", Model: "llama",
			Server: map[record.ServerKey]string{"model_id": "llama", "quantization": "q4_K_M", "runtime": "llama.cpp",
				"runtime_version": "b4000", "max_model_len": "8192", "sampling.temperature": "0.8", "endpoints": "/v1/models"}}}
}

// compareReq is a completed request of a point at load, sent at sentMS,
// with its first token ttftMS later and then n−1 more tokens itlMS apart,
// one per chunk.
func compareReq(point int, load record.Load, id int, sentMS, ttftMS, itlMS float64, n int) *record.Record {
	r := &record.Record{Schema: record.Schema, Point: point, Load: load, ID: int64(id), Phase: record.PhaseMeasured,
		API: "openai-chat", OutputTokens: n, OutputTokensSource: record.SourceUsage}
	r.SentNS = nsOfMS(sentMS)
	r.FirstTokenNS = r.SentNS + nsOfMS(ttftMS)
	for i := range n {
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: nsOfMS(ttftMS + float64(i)*itlMS), Tokens: 1})
	}
	r.EndNS = r.SentNS + r.Chunks[n-1].AtNS
	return r
}

func nsOfMS(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// compareSide summarises records as compare's command does: one
// aggregator for the summary, one evaluator for the intervals.
func compareSide(name string, run *record.Run, recs ...*record.Record) *compare.Side {
	ev := &slo.Evaluator{}
	var agg metrics.Aggregator
	for _, r := range recs {
		agg.Add(r)
		ev.Add(r)
	}
	return &compare.Side{Name: name, Summary: metrics.Summarize(run, &agg), Eval: ev}
}

// goldenSides are two runs of a llama.cpp server, the second with a q8_0
// build: at c=1 the change is inside noise, at c=4 TTFT and decode speed
// are clearly worse, and c=8 was measured by A only.
func goldenSides() (*compare.Side, *compare.Side) {
	ra, rb := compareRun(), compareRun()
	ra.Started, rb.Started = "2026-11-30T09:00:00.123Z", "2026-12-01T09:00:00Z"
	rb.Target.Server = map[record.ServerKey]string{"model_id": "llama", "quantization": "q8_0", "runtime": "llama.cpp",
		"runtime_version": "b4000", "max_model_len": "8192", "sampling.temperature": "0.8"}
	c1, c4, c8 := record.Load{Concurrency: 1}, record.Load{Concurrency: 4}, record.Load{Concurrency: 8}
	var a, b []*record.Record
	for i := range 400 {
		t, t4 := float64(i)*300, float64(i)*85 // c=4: four requests in flight
		a = append(a, compareReq(0, c1, i, t, 100+float64(i%10)*4, 10, 16), compareReq(1, c4, 1000+i, t4, 150+float64(i%10)*4, 12, 16))
		b = append(b, compareReq(0, c1, i, t, 101+float64(i%10)*4, 10, 16), compareReq(1, c4, 1000+i, t4, 190+float64(i%10)*4, 14, 16))
		a = append(a, compareReq(2, c8, 2000+i, t, 300, 20, 16))
	}
	// one request of B's c=4 failed after 30 ms
	b = append(b, &record.Record{Schema: record.Schema, Point: 1, Load: c4, ID: 1999, Phase: record.PhaseMeasured,
		API: "openai-chat", SentNS: nsOfMS(17_000), EndNS: nsOfMS(17_030),
		Error: &record.Error{Class: record.ClassHTTP5xx, Message: "boom", Status: 500}})
	return compareSide("runs/q4", ra, a...), compareSide("runs/q8", rb, b...)
}

func parseGate(t *testing.T, s string) compare.Gate {
	t.Helper()
	g, err := compare.ParseGate(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestComparisonGolden(t *testing.T) {
	var gates []compare.Gate
	for _, s := range []string{"ttft p95 +10%", "speed p50 -5%", "e2e p50 +500ms"} {
		gates = append(gates, parseGate(t, s))
	}
	a, b := goldenSides()
	r := compare.Compare(a, b, compare.Options{Gates: gates})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"compare/text.golden": func(w *bytes.Buffer) error { return Comparison(w, r) },
		"compare/json.golden": func(w *bytes.Buffer) error { return ComparisonJSON(w, r) },
	} {
		var got bytes.Buffer
		if err := write(&got); err != nil {
			t.Fatal(err)
		}
		golden(t, name, got.Bytes())
	}
}

// The page's tables carry what the text says: the uncontrolled
// comparison first, a table per common point, then the gates.
func TestComparisonTables(t *testing.T) {
	a, b := goldenSides()
	tables := ComparisonTables(compare.Compare(a, b, compare.Options{Gates: []compare.Gate{parseGate(t, "ttft p95 +10%")}}))
	if len(tables) != 4 {
		t.Fatalf("%d tables, want control, c=1, c=4, gates", len(tables))
	}
	control, c4, gates := tables[0], tables[2], tables[3]
	if control.Title != "NOT A CONTROLLED COMPARISON (--strict refuses it): B (runs/q8) against A (runs/q4)" ||
		len(control.Rows) != 1 || control.Rows[0][0] != "quantization" || control.Notes[0] != "measured by A only, not compared: c=8" {
		t.Errorf("control table %+v", control)
	}
	if c4.Title != "c=4 — A: 400 requests, B: 401 requests (one run each)" || len(c4.Rows) != len(compare.Headline) ||
		c4.Rows[1][0] != "ttft p95" || c4.Rows[1][3] != "+40ms" || c4.Rows[1][6] != "WORSE" {
		t.Errorf("c=4 table %+v", c4)
	}
	// c=4 held its load in both runs: its gate fails on valid evidence,
	// and its table has no INCONCLUSIVE note
	if len(gates.Rows) != 2 || gates.Rows[1][1] != "c=4" || gates.Rows[1][3] != "FAIL" || gates.Rows[0][3] != "ok" ||
		slices.ContainsFunc(c4.Notes, func(n string) bool { return strings.HasPrefix(n, "INCONCLUSIVE") }) {
		t.Errorf("gates %+v", gates.Rows)
	}
}

// A row on invalid evidence says INCONCLUSIVE and why, in the text and on
// the page, and its gate reads INCONCLUSIVE rather than ok or FAIL.
func TestComparisonInconclusiveShown(t *testing.T) {
	c1 := record.Load{Concurrency: 1}
	const why = "B: sim_behind: skipped 12% of the point"
	r := &compare.Result{A: compare.RunInfo{Name: "runs/a"}, B: compare.RunInfo{Name: "runs/b"}, Controlled: true,
		Points: []compare.Point{{Load: c1, RequestsA: 400, RequestsB: 400, RunsA: 1, RunsB: 1, Inconclusive: why}},
		Gates: []compare.GateResult{{Gate: "ttft p95 +10%", Load: c1, Metric: "ttft p95", Threshold: 0.1, Relative: true,
			Worse: fp(0.5), Reason: "the point's evidence is invalid", Inconclusive: true}}}
	var text bytes.Buffer
	if err := Comparison(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  INCONCLUSIVE: " + why + "\n", "  INCONCLUSIVE  ttft p95 +10% at c=1: 50% worse"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	tables := ComparisonTables(r)
	point, gates := tables[1], tables[len(tables)-1] // after the control table
	if !slices.Contains(point.Notes, "INCONCLUSIVE: "+why) || gates.Rows[0][3] != "INCONCLUSIVE" {
		t.Errorf("html: c=1 notes %q, gate row %q", point.Notes, gates.Rows[0])
	}
}
