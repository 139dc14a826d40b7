package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/record"
)

// The compare page states its answer first: where B is worse, on how many
// of the point's metrics and which, qualified by the controlled-comparison
// check either way and the gates.
func TestComparisonAnswer(t *testing.T) {
	a, b := goldenSides()
	r := compare.Compare(a, b, compare.Options{Gates: []compare.Gate{parseGate(t, "ttft p95 +10%")}})
	got := ComparisonAnswer(r)
	if got.Tone != "worse" || !strings.HasPrefix(got.Headline, "B (runs/q8) is worse than A (runs/q4) at c=1 on 2 of 14 metrics: ttft p95 +0.735%") ||
		!strings.Contains(got.Headline, "; at c=4 on 9 of 14 metrics: ttft p50 +23.8%, ") {
		t.Errorf("headline %q (%s)", got.Headline, got.Tone)
	}
	want := []string{"NOT A CONTROLLED COMPARISON: quantization differ", "Regression gates: 1 of 2 FAIL."}
	for _, w := range want {
		if !strings.Contains(strings.Join(got.Qualifiers, "\n"), w) {
			t.Errorf("qualifiers %q lack %q", got.Qualifiers, w)
		}
	}
}

// Each outcome has its sentence: nothing shown, better only, the same
// run, no common point; a comparison whose every point is invalid says
// INCONCLUSIVE before anything else.
func TestComparisonAnswerCases(t *testing.T) {
	c1 := record.Load{Concurrency: 1}
	change := func(metric, verdict string, rel float64) compare.Change {
		return compare.Change{Metric: metric, Verdict: verdict, Rel: &rel}
	}
	point := func(inconclusive string, cs ...compare.Change) compare.Point {
		return compare.Point{Load: c1, Changes: cs, Inconclusive: inconclusive}
	}
	base := compare.Result{A: compare.RunInfo{Name: "a"}, B: compare.RunInfo{Name: "b"}, Controlled: true}
	for _, c := range []struct {
		name, prefix, tone, qualifier string
		mod                           func(r *compare.Result)
	}{
		{"noise only", "No change shown between B (b) and A (a) at any of the 1 common load points", "same",
			"Controlled comparison: model,", func(r *compare.Result) {
				r.Points = []compare.Point{point("", change("ttft p95", compare.Noise, 0.01))}
			}},
		{"better only", "B (b) is better than A (a) at c=1 on 1 of 2 metrics: itl p95 −12%; worse on none.", "better",
			"", func(r *compare.Result) {
				r.Points = []compare.Point{point("", change("itl p95", compare.Better, -0.12), change("ttft p95", compare.Noise, 0))}
			}},
		{"worse and better", "B (b) is worse than A (a) at c=1 on 1 of 2 metrics: ttft p95 +30%.", "worse",
			"Better at c=1 on 1 of 2 metrics: itl p95 −12%.", func(r *compare.Result) {
				r.Points = []compare.Point{point("", change("itl p95", compare.Better, -0.12), change("ttft p95", compare.Worse, 0.3))}
			}},
		{"every point invalid", "INCONCLUSIVE at every load point (the evidence is invalid): B (b) is better", "inconclusive",
			"INCONCLUSIVE at c=1", func(r *compare.Result) {
				r.Points = []compare.Point{point("B: sim_behind", change("itl p95", compare.Better, -0.12))}
			}},
		{"same run", "A and B are the same run (the same directory)", "same", "", func(r *compare.Result) { r.SameRun = "the same directory" }},
		{"no common point", "No load point was measured by both runs", "same", "measured by A only",
			func(r *compare.Result) { r.Notes = []string{"measured by A only, not compared: c=8"} }},
	} {
		r := base
		c.mod(&r)
		got := ComparisonAnswer(&r)
		if !strings.HasPrefix(got.Headline, c.prefix) || got.Tone != c.tone {
			t.Errorf("%s: %q (%s), want %q… (%s)", c.name, got.Headline, got.Tone, c.prefix, c.tone)
		}
		if c.qualifier != "" && !strings.Contains(strings.Join(got.Qualifiers, "\n"), c.qualifier) {
			t.Errorf("%s: qualifiers %q lack %q", c.name, got.Qualifiers, c.qualifier)
		}
	}
}

// A control check with no difference is a sentence, not an empty table.
func TestComparisonControlStated(t *testing.T) {
	r := &compare.Result{A: compare.RunInfo{Name: "a"}, B: compare.RunInfo{Name: "b"}, Controlled: true}
	c := ComparisonTables(r)[0]
	if len(c.Rows) != 0 || !strings.HasSuffix(c.Title, ": no difference") || !strings.HasPrefix(c.Notes[0], "no difference:") {
		t.Errorf("control table %+v", c)
	}
}
