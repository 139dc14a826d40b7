package report

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

func fp(v float64) *float64 { return &v }

// htmlPoint is a load point whose every drawn figure is known: latencies
// grow with the load (base), speeds fall.
func htmlPoint(idx int, l record.Load, tps, base float64) metrics.PointSummary {
	lat := func(m float64) stats.Dist {
		return stats.Dist{Mean: fp(base * m), P50: fp(base * m), P95: fp(base * m * 2), P99: fp(base * m * 3), Count: 10}
	}
	return metrics.PointSummary{Index: idx, Load: l, LoadHeld: idx != 2, OutputTPS: tps,
		Requests: metrics.Requests{Completed: 10 + idx, Failed: idx},
		TTFT:     lat(1), ITL: lat(0.1), E2E: lat(10),
		DecodeTPSReq: stats.Dist{P50: fp(1000 / base), P5: fp(500 / base), Count: 10},
	}
}

func htmlRun() *record.Run {
	return &record.Run{Version: "1.2.3", Started: "2026-12-01T07:00:00Z", Ended: "2026-12-01T07:01:00Z",
		Target: record.Target{URL: "http://127.0.0.1:8000", API: "openai-chat", Model: "m",
			Server: map[record.ServerKey]string{record.ServerRuntime: "vllm", record.ServerMaxModelLen: "4096"}},
		PromptTokens: "128", OutputTokens: "64", Seed: 7, IgnoreEOS: true, Tokenizer: "server:vllm", ClientCPUs: 2}
}

// TestPageDataRun: a run of one workload, not judged: its points in load
// order with every drawn figure, the saturation found from them, the
// distributions, timeline and facts about the run.
func TestPageDataRun(t *testing.T) {
	s := &metrics.Summary{Run: htmlRun(), Warnings: []string{"a run warning"}, Points: []metrics.PointSummary{
		htmlPoint(2, record.Load{Concurrency: 4}, 200, 40), // listed out of order: drawn by load
		htmlPoint(0, record.Load{Concurrency: 1}, 100, 10),
		htmlPoint(1, record.Load{Concurrency: 2}, 190, 20),
	}}
	s.Points[0].Warnings = []string{"a point warning"}
	curves := &metrics.Curves{}
	for i, l := range []record.Load{{Concurrency: 1}, {Concurrency: 2}} {
		curves.Add(&record.Record{Point: i, Load: l, Phase: record.PhaseMeasured, SentNS: int64(i) * 1e9,
			FirstTokenNS: int64(i)*1e9 + 1e8, EndNS: int64(i)*1e9 + 5e8, OutputTokens: 2,
			Chunks: []record.Chunk{{AtNS: 1e8, Tokens: 1}, {AtNS: 5e8, Tokens: 1}}})
	}
	got := buildPage(&HTMLPage{Title: "t", Runs: []HTMLRun{{Name: "runs/a", Summary: s, Curves: curves}}})
	cps := curves.Points()
	tl := curves.Timeline(maxTimelineBins)
	point := func(label string, x float64, held bool, ok, failed int, tps, base float64) pointData {
		p := func(m float64) pcts { return pcts{P50: fp(base * m), P95: fp(base * m * 2), P99: fp(base * m * 3)} }
		return pointData{Label: label, X: x, Held: held, Completed: ok, Failed: failed, SpeedP50: fp(1000 / base),
			SpeedP95: fp(500 / base), OutputTPS: tps, TTFT: p(1), ITL: p(0.1), E2E: p(10)}
	}
	want := pageData{Title: "t", Tables: []HTMLTable{}, Runs: []runData{{
		Name: "runs/a",
		Groups: []groupData{{Workload: "", Axis: "concurrency",
			Points: []pointData{
				point("c=1", 1, true, 10, 0, 100, 10),
				point("c=2", 2, true, 11, 1, 190, 20),
				point("c=4", 4, false, 12, 2, 200, 40),
			},
			// 190 → 200 tok/s for twice the load, latency rising
			Saturation: fp(2), SaturationLabel: "c=2", SLOs: []sloLine{},
			CDFs: []cdfData{{Label: "c=1", TTFT: cps[0].TTFT, ITL: cps[0].ITL}, {Label: "c=2", TTFT: cps[1].TTFT, ITL: cps[1].ITL}},
		}},
		Timeline: &tl,
		About: []aboutSection{
			{Title: "Workload", Rows: [][]string{{"sent", "prompt 128 tok · output 64 tok"}, {"prompt tokens", "128"},
				{"output tokens", "64"}, {"seed", "7"}, {"ignore_eos", "true"}, {"tokenizer", "server:vllm"}}},
			{Title: "Server", Rows: [][]string{{"target", "http://127.0.0.1:8000"}, {"api", "openai-chat"}, {"model", "m"},
				{"max_model_len", "4096"}, {"runtime", "vllm"}}},
			{Title: "Environment", Rows: [][]string{{"servebench", "1.2.3"}, {"started", "2026-12-01T07:00:00Z"},
				{"ended", "2026-12-01T07:01:00Z"}, {"client CPUs", "2"}, {"interrupted", "false"}}},
		},
		Warnings: []string{"a run warning", "c=4: a point warning"},
	}}}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("page data:\n%s\nwant:\n%s", g, w)
	}
	if len(cps[0].TTFT.X) != 1 || len(tl.T) == 0 {
		t.Fatalf("the curves drew nothing: %+v %+v", cps, tl)
	}
}

// TestPageDataVerdict: a judged run states its verdict first, draws its
// SLOs on the charts of their metrics and marks the verdict's saturation.
func TestPageDataVerdict(t *testing.T) {
	o := &slo.Objective{Name: "chat"}
	for _, e := range []string{"ttft p95 <= 1s", "speed p95 >= 20 tok/s", "error_rate <= 0.01"} {
		x, err := slo.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		o.SetSLO(x)
	}
	c1, c4, c8 := record.Load{Concurrency: 1}, record.Load{Concurrency: 4}, record.Load{Concurrency: 8}
	v := &slo.Verdict{Objective: "chat", TargetLoad: c8, Holds: false, Failing: false, Text: "the objective fails at c=8",
		Reasons: []string{"ttft p95 1.2s > 1s"},
		Capacity: slo.Capacity{Found: true, Load: &c4, FailsAt: &c8, FailedSLOs: []string{"ttft p95 <= 1s"},
			Shortfalls: []string{"ttft p95 1.2s > 1s"}},
		Saturation: slo.Saturation{Found: true, Load: &c1, Next: &c4}}
	s := &metrics.Summary{Points: []metrics.PointSummary{htmlPoint(0, c1, 100, 10), htmlPoint(1, c4, 400, 20), htmlPoint(2, c8, 800, 40)}}
	got := buildPage(&HTMLPage{Title: "t", Runs: []HTMLRun{{Name: "a", Summary: s, Objective: o, Verdict: v}}})
	r := got.Runs[0]
	wantV := &verdictData{Objective: "chat", Holds: false, Failing: false, Text: "the objective fails at c=8",
		Reasons: []string{"ttft p95 1.2s > 1s"}, TargetLoad: "c=8", Capacity: "c=4", FailsAt: "c=8",
		Binding: []string{"ttft p95 <= 1s", "ttft p95 1.2s > 1s"}, Saturation: "c=1",
		SLOs: []string{"ttft p95 <= 1s", "speed p95 >= 20 tok/s", "error_rate <= 0.01"}, Workloads: []verdictData{}}
	if !reflect.DeepEqual(r.Verdict, wantV) {
		t.Errorf("verdict %+v\nwant %+v", r.Verdict, wantV)
	}
	g := r.Groups[0]
	wantSLO := []sloLine{{Chart: "ttft", Stat: "p95", Value: 1000, Expr: "ttft p95 <= 1s"},
		{Chart: "speed", Stat: "p5", Value: 20, Expr: "speed p95 >= 20 tok/s"}}
	if !reflect.DeepEqual(g.SLOs, wantSLO) {
		t.Errorf("SLO lines %+v, want %+v", g.SLOs, wantSLO)
	}
	if g.Saturation == nil || *g.Saturation != 1 || g.SaturationLabel != "c=1" {
		t.Errorf("saturation %v %q, want the verdict's c=1", g.Saturation, g.SaturationLabel)
	}
	// a run without curves draws no timeline and no distribution; without
	// run.json it says so
	if r.Timeline != nil || len(g.CDFs) != 0 || r.About[0].Rows[0][1] != "no run.json: records alone" {
		t.Errorf("timeline %v, CDFs %v, about %v", r.Timeline, g.CDFs, r.About)
	}
	// no verdict and no capacity found: said so
	v.Capacity = slo.Capacity{}
	v.Saturation = slo.Saturation{}
	got = buildPage(&HTMLPage{Runs: []HTMLRun{{Summary: s, Objective: o, Verdict: v}}})
	if d := got.Runs[0].Verdict; d.Capacity != "none: the lowest load failed" || d.FailsAt != "" || d.Saturation != "not reached" || len(d.Binding) != 0 {
		t.Errorf("verdict without capacity: %+v", d)
	}
	if got.Runs[0].Groups[0].Saturation != nil {
		t.Errorf("saturation %v, want none when the verdict found none", *got.Runs[0].Groups[0].Saturation)
	}
}

// TestPageDataMatrixVerdict: a workload matrix's verdict lists each
// cell's, and each cell's chart marks that cell's saturation.
func TestPageDataMatrixVerdict(t *testing.T) {
	a, b := "in=128 out=64", "in=2048 out=64"
	la1, la4 := record.Load{Workload: a, Concurrency: 1}, record.Load{Workload: a, Concurrency: 4}
	lb1, lb4 := record.Load{Workload: b, Concurrency: 1}, record.Load{Workload: b, Concurrency: 4}
	cell := func(w string, holds bool, capy, sat *record.Load) *slo.Verdict {
		return &slo.Verdict{Objective: "chat", Workload: w, Holds: holds, TargetLoad: record.Load{Workload: w, Concurrency: 4},
			Capacity: slo.Capacity{Found: capy != nil, Load: capy}, Saturation: slo.Saturation{Found: sat != nil, Load: sat}}
	}
	v := &slo.Verdict{Objective: "chat", TargetLoad: record.Load{Concurrency: 4}, Capacity: slo.Capacity{Found: true, Load: &lb1},
		Workloads: []*slo.Verdict{cell(a, true, &la4, &la1), cell(b, false, &lb1, nil)}}
	s := &metrics.Summary{Points: []metrics.PointSummary{htmlPoint(0, la1, 10, 10), htmlPoint(1, la4, 40, 10),
		htmlPoint(2, lb1, 10, 10), htmlPoint(3, lb4, 39, 10)}}
	got := buildPage(&HTMLPage{Runs: []HTMLRun{{Summary: s, Verdict: v}}})
	d := got.Runs[0].Verdict
	if len(d.Workloads) != 2 || d.Capacity != "in=2048 out=64 c=1" {
		t.Fatalf("matrix verdict %+v", d)
	}
	if w := d.Workloads[0]; w.Workload != a || !w.Holds || w.Capacity != "in=128 out=64 c=4" || w.Saturation != "in=128 out=64 c=1" || w.TargetLoad != "in=128 out=64 c=4" {
		t.Errorf("cell %q: %+v", a, w)
	}
	if w := d.Workloads[1]; w.Workload != b || w.Holds || w.Saturation != "not reached" {
		t.Errorf("cell %q: %+v", b, w)
	}
	g := got.Runs[0].Groups
	if g[0].Saturation == nil || *g[0].Saturation != 1 || g[0].SaturationLabel != "c=1" || g[1].Saturation != nil {
		t.Errorf("saturation marks %v %q / %v, want c=1 for %q and none for %q", g[0].Saturation, g[0].SaturationLabel, g[1].Saturation, a, b)
	}
}

// TestPageDataWorkloads: a workload matrix's points are grouped by their
// workload cell, in the order the cells ran; an open loop is drawn
// against its rate; two runs are two candidates; a caller's tables pass.
func TestPageDataWorkloads(t *testing.T) {
	a, b := "in=128 out=64", "in=2048 out=64"
	s := &metrics.Summary{Points: []metrics.PointSummary{
		htmlPoint(0, record.Load{Workload: b, Rate: 1}, 10, 10),
		htmlPoint(1, record.Load{Workload: a, Rate: 1}, 10, 10),
		htmlPoint(2, record.Load{Workload: b, Rate: 2}, 20, 10),
	}}
	tables := []HTMLTable{{Title: "differences", Columns: []string{"metric", "change"}, Rows: [][]string{{"ttft p95", "+3%"}}, Notes: []string{"n"}}}
	got := buildPage(&HTMLPage{Runs: []HTMLRun{{Name: "x", Summary: s}, {Name: "y", Summary: s}}, Tables: tables})
	if len(got.Runs) != 2 || got.Runs[1].Name != "y" || !reflect.DeepEqual(got.Tables, tables) {
		t.Fatalf("runs %d, tables %+v", len(got.Runs), got.Tables)
	}
	gs := got.Runs[0].Groups
	if len(gs) != 2 || gs[0].Workload != b || gs[1].Workload != a {
		t.Fatalf("groups %+v, want %q then %q", gs, b, a)
	}
	if gs[0].Axis != "request rate (req/s)" || len(gs[0].Points) != 2 || gs[0].Points[1].Label != "r=2/s" || gs[0].Points[1].X != 2 || len(gs[1].Points) != 1 {
		t.Errorf("group %q: %+v", b, gs[0])
	}
}

// TestCurvesTelemetryOnPage: what telemetry.jsonl sampled reaches the
// page's timeline.
func TestCurvesTelemetryOnPage(t *testing.T) {
	c := &metrics.Curves{}
	c.Add(&record.Record{Point: 0, Phase: record.PhaseMeasured, SentNS: 0, EndNS: 1e9})
	c.AddTelemetry(telemetry.SliceScan([]telemetry.Sample{{TNS: 5e8, Source: telemetry.KindServer, Server: &telemetry.Server{KVCacheUsage: fp(0.25)}}}), 1)
	s := &metrics.Summary{Points: []metrics.PointSummary{htmlPoint(0, record.Load{Concurrency: 1}, 1, 1)}}
	d := buildPage(&HTMLPage{Runs: []HTMLRun{{Summary: s, Curves: c}}})
	found := false
	for _, v := range d.Runs[0].Timeline.KVCachePct {
		found = found || (v != nil && *v == 25)
	}
	if !found {
		t.Errorf("KV cache %% not on the timeline: %v", d.Runs[0].Timeline.KVCachePct)
	}
}

// Repeats of a load are told apart in the order they ran; a point
// measured again is marked superseded and is no repeat.
func TestRepeatLabels(t *testing.T) {
	c1, c4 := record.Load{Concurrency: 1}, record.Load{Concurrency: 4}
	s := &metrics.Summary{Run: &record.Run{Points: []record.PointClient{{Index: 0, Load: c1, Superseded: true}}},
		Points: []metrics.PointSummary{{Index: 0, Load: c1}, {Index: 1, Load: c1}, {Index: 2, Load: c4}, {Index: 3, Load: c4}, {Index: 4, Load: c4}}}
	got := repeatLabels(s)
	want := map[int]string{0: " · superseded", 2: " · repeat 1/3", 3: " · repeat 2/3", 4: " · repeat 3/3"}
	if len(got) != len(want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("point %d: %q, want %q", i, got[i], w)
		}
	}
}
