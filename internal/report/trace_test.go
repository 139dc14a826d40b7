package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/workload"
)

// traceSummary is a replayed trace's summary: the shape from run.json, one
// point with what was achieved.
func traceSummary() *metrics.Summary {
	lengths := stats.Dist{P50: fp(1000), P99: fp(4000), Count: 10}
	shape := &record.Trace{Path: "dir/conv.jsonl", Format: record.TraceMooncake, BlockSize: 512, Speed: 2, Requests: 10, SpanS: 4.5,
		MeanRate: 2, BinS: 1, Arrivals: []int{4, 0, 2, 4}, PromptTokens: lengths, OutputTokens: lengths, Reuse: fp(0.375),
		Labels: map[string]int{"model=GPT-4": 3, "model=ChatGPT": 7}}
	p := metrics.PointSummary{Load: record.Load{Rate: 2}, AchievedRate: 1.9, PromptTokens: lengths, OutputTokens: lengths,
		Client: &record.ClientStats{Dropped: 1},
		Trace:  &metrics.Trace{Sent: []int{4, 0, 1, 4}, ScheduleErrorMS: stats.Dist{P50: fp(1.25), P99: fp(30), Count: 9}, Replayed: 0.9}}
	return &metrics.Summary{Run: &record.Run{Trace: shape, PromptTokens: "trace", OutputTokens: "trace"}, Points: []metrics.PointSummary{p}}
}

// The terminal shows the trace's shape beside what was sent.
func TestTraceText(t *testing.T) {
	var b strings.Builder
	writeTrace(&b, traceSummary())
	got := b.String()
	for _, want := range []string{
		"Trace conv.jsonl (mooncake): 10 requests over 4.5 s, replayed at ×2",
		"reuse: 37.5% of prompt tokens are in blocks of 512",
		"labels: model=ChatGPT 7, model=GPT-4 3",
		"arrivals/s (mean)       2.00       1.90",
		"sent − scheduled ms p50/p99              1.2/30.0",
		"1 arrivals dropped under --max-concurrency",
		"trace |█ ▄█|",
		"sent  |█ ▂█|",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if h := workloadText(traceSummary()); !strings.HasPrefix(h, "trace conv.jsonl (mooncake, 10 requests, ×2)") {
		t.Errorf("header %q", h)
	}
}

// A judged replay's points at other rates (a capacity search's probes, a
// target above the trace's rate) are each titled with how many times
// faster they sent the trace, their trace column scaled to match.
func TestTraceTextScaledPoints(t *testing.T) {
	s := traceSummary()
	p := s.Points[0]
	p.Load.Rate, p.AchievedRate = 4, 3.9
	p.Trace = &metrics.Trace{Sent: []int{4, 0, 2, 4}, Replayed: 1, Scale: 2}
	s.Points = append(s.Points, p)
	var b strings.Builder
	writeTrace(&b, s)
	got := b.String()
	for _, want := range []string{
		"  r=2/s, ×1 the trace's rate (replayed at ×2):",
		"  r=4/s, ×2 the trace's rate (replayed at ×4):",
		"arrivals/s (mean)       4.00       3.90",
		"arrivals per 0.5 s (peak 8.0/s): trace |█ ▄█|",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	// one point, the replay itself: no title
	b.Reset()
	writeTrace(&b, traceSummary())
	if strings.Contains(b.String(), "the trace's rate") {
		t.Errorf("a single replay titled:\n%s", b.String())
	}
}

// The page gets the same facts and both series.
func TestTraceHTMLData(t *testing.T) {
	d := buildTrace(traceSummary())
	if d == nil || len(d.T) != 4 || d.T[3] != 3 || d.Trace[0] != 4 || d.Sent[2] != 1 {
		t.Fatalf("%+v", d)
	}
	if buildTrace(&metrics.Summary{Run: &record.Run{}}) != nil {
		t.Errorf("a trace section without a trace")
	}
}

// The trace section in a browser: its chart drawn with both series, no
// error on the page.
func TestTraceHTMLInBrowser(t *testing.T) {
	r := samplePage(t, "runs/a", 60, 20)
	ts := traceSummary()
	r.Summary.Run.Trace = ts.Run.Trace
	r.Summary.Points[0].Trace = ts.Points[0].Trace
	v := openPage(t, writePage(t, &HTMLPage{Title: "servebench · trace", Runs: []HTMLRun{r}}))
	for _, p := range v.problems {
		t.Error(p)
	}
	checkCharts(t, v, []string{"Arrivals per second: the trace and the requests sent"})
}

// A judged replay's verdict says its capacity as a multiple of the
// trace's rate; any other objective, or no capacity found, says nothing.
func TestTraceCapacityLine(t *testing.T) {
	trace := &slo.Objective{}
	trace.OnTrace(2.5, 0, 0)
	synthetic := &slo.Objective{Load: slo.Load{Rate: []float64{2.5}}, Workload: workload.Spec{PromptTokens: "512"}}
	at := func(r float64) *record.Load { return &record.Load{Rate: r} }
	for _, c := range []struct {
		o    *slo.Objective
		capy slo.Capacity
		want string
	}{
		{trace, slo.Capacity{Found: true, Load: at(5)}, "capacity at ×2 the trace's rate (5 req/s ÷ 2.5 req/s)"},
		{trace, slo.Capacity{Found: true, Load: at(1.25)}, "capacity at ×0.5 the trace's rate (1.25 req/s ÷ 2.5 req/s)"},
		{trace, slo.Capacity{Found: false, FailsAt: at(1)}, ""},
		{synthetic, slo.Capacity{Found: true, Load: at(5)}, ""},
	} {
		got, ok := traceCapacityLine(c.o, c.capy)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%+v: %q %v, want %q", c.capy, got, ok, c.want)
		}
	}
}
