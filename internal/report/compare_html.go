package report

import (
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
		r, _, err := LoadRun(path, nil, o, nil)
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
	runs[0].Name, runs[1].Name = "A: "+runs[0].Name, "B: "+runs[1].Name
	return r, &HTMLPage{Title: "servebench compare · " + r.A.Name + " vs " + r.B.Name, Runs: runs, Tables: ComparisonTables(r)}, nil
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
		t.Notes = append(t.Notes, "no difference: model, quantization, runtime and version, context length, sampling, workload, load policy and time scale match")
	}
	return addNotes(t, r.Notes)
}

func pointTable(p compare.Point) HTMLTable {
	t := HTMLTable{Title: p.Load.Label() + " — " + sides(p),
		Columns: []string{"metric", "A", "B", "change", "relative", "interval", "verdict"}, Rows: [][]string{}, Notes: []string{}}
	for _, c := range p.Changes {
		f := c.Statistic().Format
		t.Rows = append(t.Rows, []string{c.Metric, value(f, c.A), value(f, c.B), signed(f, c.Diff), relText(c.Rel), ciText(f, c), verdictText(c)})
		if c.Why != "" && !c.Thin {
			t.Notes = append(t.Notes, c.Metric+": "+c.Why)
		}
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
