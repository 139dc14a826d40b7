package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sweep"
)

func sampleSweep() *sweep.File {
	f := func(v float64) *float64 { return &v }
	c := func(name string, pts ...sweep.Point) sweep.Config {
		return sweep.Config{Name: name, Params: map[string]string{}, Startup: &sweep.Startup{ReadyS: f(1.5), FirstTokenS: f(1.4)}, Points: pts}
	}
	pt := func(conc int, tps, p50, p95 float64) sweep.Point {
		return sweep.Point{Load: record.Load{Concurrency: conc}, OutputTPS: tps, DecodeP50: f(p50), DecodeP95: f(p95)}
	}
	failed := "exited with status 1 before it was ready"
	return &sweep.File{Serve: "server --port {port} --seqs {seqs}",
		Configs: []sweep.Config{
			c("seqs-2", pt(1, 100, 100, 90), pt(2, 190, 95, 85)),
			c("seqs-8", pt(1, 95, 99, 95), pt(8, 700, 80, 70)),
			{Name: "seqs-32", Params: map[string]string{}, Error: &failed},
		},
		Pareto: []sweep.ParetoPoint{
			{Config: "seqs-8", Load: record.Load{Concurrency: 1}, On: []string{"p95"}, X: 95, SpeedP50: f(99), SpeedP95: f(95)},
			{Config: "seqs-2", Load: record.Load{Concurrency: 1}, On: []string{"p50"}, X: 100, SpeedP50: f(100), SpeedP95: f(90)},
			{Config: "seqs-2", Load: record.Load{Concurrency: 2}, On: []string{"p50", "p95"}, X: 190, SpeedP50: f(95), SpeedP95: f(85)},
			{Config: "seqs-8", Load: record.Load{Concurrency: 8}, On: []string{"p50", "p95"}, X: 700, SpeedP50: f(80), SpeedP95: f(70)},
		}}
}

func TestSweepTable(t *testing.T) {
	var b strings.Builder
	if err := Sweep(&b, sampleSweep()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{"seqs-2      1.50           1.40", "seqs-32        -", "FAILED",
		"Pareto frontier", "seqs-2   c=2         190.0       95.0       85.0  p50, p95",
		"Failed (each with its server.log):\n  - seqs-32: exited with status 1 before it was ready"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
}

func TestFrontierData(t *testing.T) {
	d := frontierOf(sampleSweep())
	// each frontier by increasing throughput, its own speed percentile
	if got := d.Frontier["p50"]; len(got) != 3 || got[0] != [2]float64{100, 100} || got[2] != [2]float64{700, 80} {
		t.Errorf("p50 frontier %v", got)
	}
	if got := d.Frontier["p95"]; len(got) != 3 || got[0] != [2]float64{95, 95} || got[1] != [2]float64{190, 85} {
		t.Errorf("p95 frontier %v", got)
	}
	if len(d.Configs) != 3 || len(d.Configs[1].Points) != 2 || len(d.Configs[2].Points) != 0 {
		t.Errorf("configurations %+v", d.Configs)
	}
}

// TestSweepPageInBrowser: the sweep's page draws its frontier chart with
// every configuration's points and both frontiers, beside a run's charts.
func TestSweepPageInBrowser(t *testing.T) {
	r := samplePage(t, "seqs-2", 150, 10)
	f := sampleSweep()
	path := writePage(t, &HTMLPage{Title: "servebench sweep", Answer: SweepAnswer(f), Runs: []HTMLRun{r}, Frontier: frontierOf(f)})
	v := openPage(t, path)
	for _, p := range v.problems {
		t.Error(p)
	}
	// the answer first: which configurations reach the frontier, and the failed one
	if v.first != "answer" || !strings.Contains(v.answer, "on the Pareto frontier") || !strings.Contains(v.answer, "FAILED seqs-32") {
		t.Errorf("the page opens with %q: %q, want the sweep's answer", v.first, v.answer)
	}
	checkCharts(t, v, []string{"Decode speed per user against output tok/s (aggregate)", "Decode speed per request and aggregate output tok/s"})
	for _, c := range v.charts {
		// 4 points of two configurations at two speeds, 3 + 3 on the frontiers
		if c.Title == "Decode speed per user against output tok/s (aggregate)" && c.Points != 14 {
			t.Errorf("frontier chart: %d values drawn, want 14", c.Points)
		}
	}
}

// TestSweepAnswer: the sweep page's first line names the recommendation,
// or that none meets the objective, or the frontier's configurations; the
// failed ones qualify it.
func TestSweepAnswer(t *testing.T) {
	recommended, none, incon, failedAll := sampleSweep(), sampleSweep(), sampleSweep(), sampleSweep()
	recommended.Objective, recommended.Recommended, recommended.Why = "chat", "seqs-2", "it meets the objective on 1 GPU"
	none.Objective, none.Why = "chat", "seqs-2 fails ttft p95 at c=2"
	incon.Objective, incon.Why, incon.Inconclusive = "chat", "seqs-8 is inconclusive", []string{"seqs-8"}
	msg := "never ready"
	for i := range failedAll.Configs {
		failedAll.Configs[i].Error = &msg
	}
	for _, tc := range []struct {
		name     string
		f        *sweep.File
		headline string
		tone     string
	}{
		{"frontier", sampleSweep(), "2 of 3 configurations measured; on the Pareto frontier of per-user speed against throughput: seqs-8, seqs-2.", "same"},
		{"recommended", recommended, "Recommended for objective chat: seqs-2 — it meets the objective on 1 GPU", "better"},
		{"none meets it", none, "No configuration meets objective chat — seqs-2 fails ttft p95 at c=2", "worse"},
		{"inconclusive", incon, "No configuration meets objective chat on valid evidence — seqs-8 is inconclusive", "inconclusive"},
		{"all failed", failedAll, "Every configuration failed (3).", "worse"},
	} {
		a := SweepAnswer(tc.f)
		if a.Headline != tc.headline || a.Tone != tc.tone {
			t.Errorf("%s: %q (%s), want %q (%s)", tc.name, a.Headline, a.Tone, tc.headline, tc.tone)
		}
		if tc.name != "all failed" && (len(a.Qualifiers) == 0 || a.Qualifiers[len(a.Qualifiers)-1] != "FAILED seqs-32: exited with status 1 before it was ready") {
			t.Errorf("%s: qualifiers %q, want the failed configuration last", tc.name, a.Qualifiers)
		}
	}
}
