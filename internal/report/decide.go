package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// decideLabels are the labels shown as their own columns, in order; any
// other label is listed in the "labels" column.
var decideLabels = []string{"gpus", "gpu", "runtime", "quantization", "cost"}

// Decision writes decide's table: per candidate its labels, capacity
// under the objective, saturation point, binding SLOs and whether it
// meets the objective at the target load; then the differences the
// labels do not explain and the recommendation.
func Decision(w io.Writer, d *slo.Decision) error { return writeDecision(w, d, false) }

// DecisionMarkdown writes what Decision writes, its table in Markdown.
func DecisionMarkdown(w io.Writer, d *slo.Decision) error { return writeDecision(w, d, true) }

func writeDecision(w io.Writer, d *slo.Decision, md bool) error {
	var b strings.Builder
	bullet := listItem(md)
	o := d.Objective
	fmt.Fprintf(&b, "Objective %s · target load %s · priority %s\n\n", orDash(o.Name), o.Load.TargetLoad().Text(record.LoadLong), orDash(o.Priority))
	head := append([]string{"candidate"}, decideLabels...)
	rows := [][]string{append(head, "other labels", "capacity", "saturation", "binding SLO", "at target", "")}
	for _, x := range d.Outcomes {
		rows = append(rows, decisionRow(x, x.Candidate.Name == d.Recommended))
	}
	if md {
		writeMarkdownTable(&b, rows)
	} else if err := Rows(&b, rows); err != nil {
		return err
	}
	var errs []string
	for _, x := range d.Outcomes {
		if x.Error != "" {
			errs = append(errs, x.Candidate.Name+": "+x.Error)
		}
	}
	if len(errs) > 0 {
		b.WriteString("\nNot measured:\n" + bullet + strings.Join(errs, "\n"+bullet) + "\n")
	}
	var flagged []string
	for _, diff := range d.Differences {
		if !diff.Controlled {
			flagged = append(flagged, differenceLine(diff))
		}
	}
	if len(flagged) > 0 {
		b.WriteString("\nUncontrolled differences (the servers differ where their labels do not say so; the comparison may not be like for like):\n")
		for _, f := range flagged {
			b.WriteString(bullet + f + "\n")
		}
	}
	var unjudged []string
	for _, x := range d.Outcomes {
		if x.Error == "" && x.Verdict != nil && x.Verdict.Inconclusive {
			unjudged = append(unjudged, x.Candidate.Name+": "+x.Verdict.Why())
		}
	}
	if len(unjudged) > 0 {
		b.WriteString("\nInconclusive (the evidence cannot carry a verdict):\n" + bullet + strings.Join(unjudged, "\n"+bullet) + "\n")
	}
	switch {
	case d.Recommended != "":
		fmt.Fprintf(&b, "\nRecommendation: %s — %s\n", d.Recommended, d.Why)
	case len(d.Inconclusive) > 0:
		fmt.Fprintf(&b, "\nNo recommendation: %s (exit 4)\n", d.Why)
	default:
		fmt.Fprintf(&b, "\nNo recommendation: %s (exit 3)\n", d.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func decisionRow(x slo.Outcome, recommended bool) []string {
	c := x.Candidate
	row := []string{c.Name}
	for _, l := range decideLabels {
		row = append(row, orDash(c.Labels[l]))
	}
	var other []string
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if !slices.Contains(decideLabels, k) {
			other = append(other, k+"="+c.Labels[k])
		}
	}
	row = append(row, orDash(strings.Join(other, " ")))
	if x.Error != "" || x.Verdict == nil {
		return append(row, "-", "-", "-", "error", "")
	}
	v := x.Verdict
	capy, sat := orDash(capacityCell(v.Capacity)), "-"
	if v.Saturation.Found {
		sat = loadLabel(*v.Saturation.Load)
	}
	at := "meets"
	switch {
	case v.Inconclusive:
		at = "INCONCLUSIVE"
	case !v.Holds:
		at = "FAILS"
	}
	mark := ""
	if recommended {
		mark = "← recommended"
	}
	return append(row, capy, sat, orDash(strings.Join(x.Binding, ", ")), at, mark)
}

// capacityCell is the capacity as one load: "c=8", "≥c=8" for a lower
// bound, "<c=1" when even the lowest load failed, "inconclusive" when the
// lowest load's evidence was invalid, "" when not measured.
func capacityCell(c slo.Capacity) string {
	switch {
	case c.Load != nil && (c.FailsAt == nil || c.BoundedBy == slo.BoundedBySample || c.BoundedBy == slo.BoundedByInvalid):
		// a lower bound: nothing above failed, or what did pass above was
		// not held and is no evidence
		return "≥" + loadLabel(*c.Load)
	case c.Load != nil:
		return loadLabel(*c.Load)
	case c.FailsAt != nil:
		return "<" + loadLabel(*c.FailsAt)
	case c.BoundedBy == slo.BoundedByInvalid:
		return "inconclusive"
	}
	return ""
}

func differenceLine(d slo.Difference) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(d.Values)) {
		parts = append(parts, name+" "+d.Values[name])
	}
	return fmt.Sprintf("%s: %s (add a %q label to declare it)", d.Key, strings.Join(parts, ", "), d.Label)
}

// DecisionJSON writes the decision as indented JSON.
func DecisionJSON(w io.Writer, d *slo.Decision) error {
	return writeJSON(w, d, false)
}

// OutcomeLine is a candidate's outcome in a line, as decide says it once
// the candidate is measured: its error, or its verdict.
func OutcomeLine(x slo.Outcome) string {
	if x.Error != "" {
		return "error: " + x.Error
	}
	if x.Verdict == nil {
		return "not measured"
	}
	return x.Verdict.Text
}
