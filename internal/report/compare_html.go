package report

import (
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/rundir"
)

// ComparePage reads runs a and b side by side (compare.Both: warn gets A's
// warnings first), each with its page drawn from the records as they are
// read (LoadRun), and compares them: the comparison, and its page, both
// runs' charts overlaid ("A: …", "B: …") with the comparison's tables.
func ComparePage(a, b compare.RunPath, o rundir.Options, gates []compare.Gate, warn func(string)) (*compare.Result, *HTMLPage, error) {
	paths := [2]compare.RunPath{a, b}
	var sides [2]*compare.Side
	runs := make([]HTMLRun, 2)
	load := func(path string, o rundir.Options) (*metrics.Summary, HTMLRun, error) {
		r, _, err := LoadRun(path, nil, o, nil, false)
		return r.Summary, r, err
	}
	err := compare.Both(func(i int, warn func(string)) (err error) {
		o := o
		o.Warn = warn
		sides[i], runs[i], err = compare.ReadSide(paths[i:i+1], o, load)
		return err
	}, warn)
	if err != nil {
		return nil, nil, err
	}
	r := compare.Compare(sides[0], sides[1], compare.Options{Gates: gates})
	return r, ComparisonPage(r, runs), nil
}

// ComparisonPage is compare --format html's page: the headline first, both
// runs' charts overlaid (named A and B), and the comparison's tables.
func ComparisonPage(r *compare.Result, runs []HTMLRun) *HTMLPage {
	runs[0].Name, runs[1].Name = "A: "+runs[0].Name, "B: "+runs[1].Name
	return &HTMLPage{Title: "servebench compare · " + r.A.Name + " vs " + r.B.Name,
		Answer: ComparisonAnswer(r), Runs: runs, Tables: ComparisonTables(r)}
}

// ComparisonAnswer is a comparison in one sentence, as the page states it
// first: where B is worse than A and on which metrics, else where it is
// better, else that no change was shown; qualified by whatever makes it
// weaker (not a controlled comparison, invalid evidence, no repeats) and
// by the gates' outcome.
func ComparisonAnswer(r *compare.Result) *HTMLAnswer {
	a := &HTMLAnswer{Tone: "same", Qualifiers: []string{}}
	ab := "B (" + r.B.Name + ") "
	than := " than A (" + r.A.Name + ")"
	switch {
	case r.SameRun != "":
		a.Headline = "A and B are the same run (" + r.SameRun + "): there is no change to measure."
		return a
	case len(r.Points) == 0:
		a.Headline = "No load point was measured by both runs: nothing is compared."
		a.Qualifiers = append(a.Qualifiers, r.Notes...)
		return a
	}
	worse, better := changesBy(r, compare.Worse), changesBy(r, compare.Better)
	switch {
	case len(worse) > 0:
		a.Tone, a.Headline = "worse", ab+"is worse"+than+" "+strings.Join(worse, "; ")+"."
		if len(better) > 0 {
			a.Qualifiers = append(a.Qualifiers, "Better "+strings.Join(better, "; ")+".")
		}
	case len(better) > 0:
		a.Tone, a.Headline = "better", ab+"is better"+than+" "+strings.Join(better, "; ")+"; worse on none."
	default:
		a.Headline = "No change shown between " + ab + "and A (" + r.A.Name + ") at any of the " +
			strconv.Itoa(len(r.Points)) + " common load points: every interval holds zero or there is none."
	}
	a.Qualifiers = append(a.Qualifiers, comparisonQualifiers(r)...)
	if allInconclusive(r) {
		a.Tone, a.Headline = "inconclusive", "INCONCLUSIVE at every load point (the evidence is invalid): "+a.Headline
	}
	if r.Regressed || r.Inconclusive {
		a.Tone = map[bool]string{true: "worse", false: "inconclusive"}[r.Regressed]
	}
	return a
}

func allInconclusive(r *compare.Result) bool {
	for _, p := range r.Points {
		if p.Inconclusive == "" {
			return false
		}
	}
	return true
}

// changesBy says, point by point, on how many metrics a comparison's
// changes have verdict v and which: "at c=16 on 3 of 14 metrics: ttft p95
// +21%, …".
func changesBy(r *compare.Result, v string) []string {
	var out []string
	for _, p := range r.Points {
		var ms []string
		for _, c := range p.Changes {
			if c.Verdict == v {
				ms = append(ms, c.Metric+" "+relOrDiff(c))
			}
		}
		if len(ms) > 0 {
			out = append(out, "at "+p.Load.Label()+" on "+strconv.Itoa(len(ms))+" of "+strconv.Itoa(len(p.Changes))+" metrics: "+strings.Join(ms, ", "))
		}
	}
	return out
}

func relOrDiff(c compare.Change) string {
	if c.Rel != nil {
		return relText(c.Rel)
	}
	return signed(c.Statistic().Format, c.Diff)
}

// comparisonQualifiers are what weakens a comparison's headline: not a
// controlled comparison, points whose evidence is invalid, changes with no
// interval for want of repeats, and the regression gates' outcome.
func comparisonQualifiers(r *compare.Result) []string {
	var out []string
	if r.Controlled {
		out = append(out, "Controlled comparison: model, quantization, runtime and version, context length, sampling, workload, load policy and time scale match.")
	} else {
		var ds []string
		for _, d := range r.Differences {
			if d.Known {
				ds = append(ds, d.Property)
			}
		}
		out = append(out, "NOT A CONTROLLED COMPARISON: "+strings.Join(ds, ", ")+" differ (see the table below).")
	}
	var inconclusive []string
	unrepeated, total := 0, 0
	for _, p := range r.Points {
		if p.Inconclusive != "" {
			inconclusive = append(inconclusive, p.Load.Label())
		}
		for _, c := range p.Changes {
			total++
			if c.Verdict == compare.Unknown && c.Unrepeated() {
				unrepeated++
			}
		}
	}
	if len(inconclusive) > 0 {
		out = append(out, "INCONCLUSIVE at "+strings.Join(inconclusive, ", ")+": the evidence of either run there is invalid (the reasons are under each point).")
	}
	if unrepeated > 0 {
		out = append(out, strconv.Itoa(unrepeated)+" of "+strconv.Itoa(total)+" changes have no interval: one run each; repeat (run --repeat N) to know.")
	}
	if len(r.Gates) > 0 {
		failed := 0
		for _, g := range r.Gates {
			if g.Failed {
				failed++
			}
		}
		out = append(out, "Regression gates: "+strconv.Itoa(failed)+" of "+strconv.Itoa(len(r.Gates))+" FAIL.")
	}
	return out
}

// ComparisonTables are a comparison of two runs as tables for the HTML
// report's page (HTMLPage), beside the two runs' own charts: the controlled-
// comparison check first, then one table per common load point with the
// text table's cells, then the regression gates.
func ComparisonTables(r *compare.Result) []HTMLTable {
	out := []HTMLTable{controlTable(r)}
	for _, p := range r.Points {
		out = append(out, pointTable(p))
	}
	if len(r.Gates) > 0 {
		out = append(out, gateTable(r))
	}
	return out
}

func controlTable(r *compare.Result) HTMLTable {
	t := HTMLTable{Title: "Controlled comparison: B (" + r.B.Name + ") against A (" + r.A.Name + ")",
		Columns: []string{"property", "A", "B", "consequence"}, Rows: [][]string{}, Notes: []string{}}
	if !r.Controlled {
		t.Title = "NOT A CONTROLLED COMPARISON (--strict refuses it): B (" + r.B.Name + ") against A (" + r.A.Name + ")"
	}
	for _, known := range []bool{true, false} {
		for _, d := range r.Differences {
			if d.Known == known {
				t.Rows = append(t.Rows, []string{d.Property, compare.OrNotReported(d.A), compare.OrNotReported(d.B), d.Consequence})
			}
		}
	}
	if len(t.Rows) == 0 {
		// stated, not an empty table
		t.Title = "Controlled comparison: B (" + r.B.Name + ") against A (" + r.A.Name + "): no difference"
		t.Notes = append(t.Notes, "no difference: model, quantization, runtime and version, context length, sampling, workload, load policy and time scale match")
	}
	return addNotes(t, r.Notes)
}

func pointTable(p compare.Point) HTMLTable {
	t := HTMLTable{Title: p.Load.Label() + " — " + sides(p),
		Columns: []string{"metric", "A (unit in the cell)", "B", "change (B − A)", "relative (% of A)", "interval of the change", "verdict"}, Rows: [][]string{}, Notes: []string{}}
	var whys []string // one note per reason, naming every metric it holds for
	metricsBy := map[string][]string{}
	for _, c := range p.Changes {
		f := c.Statistic().Format
		t.Rows = append(t.Rows, []string{c.Metric, value(f, c.A), value(f, c.B), signed(f, c.Diff), relText(c.Rel), ciText(f, c), verdictText(c)})
		if c.Why != "" && !c.Thin {
			if _, seen := metricsBy[c.Why]; !seen {
				whys = append(whys, c.Why)
			}
			metricsBy[c.Why] = append(metricsBy[c.Why], c.Metric)
		}
	}
	for _, w := range whys {
		t.Notes = append(t.Notes, strings.Join(metricsBy[w], ", ")+": "+w)
	}
	if p.Inconclusive != "" {
		t.Notes = append(t.Notes, "INCONCLUSIVE: "+p.Inconclusive)
	}
	if n := noiseNote(p); n != "" {
		t.Notes = append(t.Notes, "noise: "+n)
	}
	return addNotes(t, p.Notes)
}

func gateTable(r *compare.Result) HTMLTable {
	t := HTMLTable{Title: "Regression gates (--fail-on-regression)", Columns: []string{"gate", "load", "change", "result", "reason"}, Rows: [][]string{}, Notes: []string{}}
	for _, g := range r.Gates {
		t.Rows = append(t.Rows, []string{g.Gate, g.Load.Label(), worseText(g), gateResult(g), g.Reason})
	}
	return t
}

func addNotes(t HTMLTable, notes []string) HTMLTable {
	t.Notes = append(t.Notes, notes...)
	return t
}
