package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// ObjectiveJSON writes a run's summary with its objective and verdict
// (the summary.json of a run with an objective).
func ObjectiveJSON(w io.Writer, r *slo.Report) error {
	return writeJSON(w, r, false)
}

// verdictDoc is everything a verdict says, gathered once so that every
// format says the same: a title, the per-load table (its first row the
// heading), the intervals (nil without repeats), the named lines
// (capacity, saturation, requirements, the verdict sentence) and the
// closing line.
type verdictDoc struct {
	title   string
	table   [][]string
	ci      [][]string
	lines   [][2]string
	closing string
}

func verdictParts(o *slo.Objective, v *slo.Verdict) verdictDoc {
	checks := o.Checks()
	d := verdictDoc{
		title: fmt.Sprintf("Objective %s · target load %s%s · %d SLOs", orDash(o.Name), v.TargetLoad.Text(record.LoadLong), workloadCount(v), len(checks)),
		table: [][]string{verdictHeader(checks)},
		ci:    intervalRows(checks, v.Points),
		lines: [][2]string{{"capacity", capacityLine(v.Capacity)}, {"saturation", saturationLine(v.Saturation)}},
	}
	for _, pv := range v.Points {
		d.table = append(d.table, verdictRow(pv))
	}
	if v.Workloads != nil {
		d.table, d.lines = matrixVerdict(d.table[:1], v)
	}
	if l, ok := traceCapacityLine(o, v.Capacity); ok {
		d.lines = append(d.lines, [2]string{"trace", l})
	}
	d.lines = append(validityLines(v.Points), d.lines...)
	for _, r := range v.Requirements {
		d.lines = append(d.lines, [2]string{r.Name, r.Note})
	}
	d.lines = append(d.lines, [2]string{"verdict", v.Text})
	switch {
	case v.Holds && v.Workloads != nil:
		d.closing = fmt.Sprintf("OBJECTIVE HOLDS at %s for every workload", v.TargetLoad.Text(record.LoadLong))
	case v.Holds:
		d.closing = fmt.Sprintf("OBJECTIVE HOLDS at %s", v.TargetLoad.Text(record.LoadLong))
	case v.Failing:
		d.closing = fmt.Sprintf("SERVER FAILING at %s, not overloaded: the objective was not judged (exit 1)", v.TargetLoad.Text(record.LoadLong))
	case v.Inconclusive:
		d.closing = fmt.Sprintf("OBJECTIVE INCONCLUSIVE at %s: %s (exit 4)", v.TargetLoad.Text(record.LoadLong), v.Why())
	default:
		d.closing = fmt.Sprintf("OBJECTIVE NOT MET at %s (exit 3)", v.TargetLoad.Text(record.LoadLong))
	}
	return d
}

// ciTitle introduces the table of intervals.
const ciTitle = "Confidence intervals (bootstrap over repeats and requests):"

// Verdict writes an objective's verdict: one row per load with each SLO's
// measured value and margin, goodput and attainment; the confidence
// intervals when there are any; then capacity, saturation, requirements
// and the verdict in a sentence.
func Verdict(w io.Writer, o *slo.Objective, v *slo.Verdict) error {
	d := verdictParts(o, v)
	var b strings.Builder
	b.WriteString(d.title + "\n\n")
	writeAligned(&b, indentGrouped(d.table))
	b.WriteString(ratioLegend + "\n")
	if d.ci != nil {
		b.WriteString("\n" + ciTitle + "\n")
		writeAligned(&b, d.ci)
	}
	b.WriteString("\n")
	width := 0
	for _, l := range d.lines {
		width = max(width, len(l[0]))
	}
	for _, l := range d.lines {
		fmt.Fprintf(&b, "%-*s  %s\n", width, l[0], l[1])
	}
	b.WriteString("\n" + d.closing + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// VerdictMarkdown writes the verdict Verdict writes, in Markdown: the
// title as a heading, the per-load table and the intervals as tables, the
// named lines as a list and the closing line in bold.
func VerdictMarkdown(w io.Writer, o *slo.Objective, v *slo.Verdict) error {
	d := verdictParts(o, v)
	var b strings.Builder
	b.WriteString("### " + d.title + "\n\n")
	writeMarkdownTable(&b, d.table)
	b.WriteString("\n" + ratioLegend + "\n")
	if d.ci != nil {
		b.WriteString("\n" + ciTitle + "\n\n")
		writeMarkdownTable(&b, d.ci)
	}
	b.WriteString("\n")
	for _, l := range d.lines {
		fmt.Fprintf(&b, "- **%s**: %s\n", l[0], l[1])
	}
	b.WriteString("\n**" + d.closing + "**\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownTable writes rows as a Markdown table, the first row its
// heading, in the summary table's plain style.
func writeMarkdownTable(b *strings.Builder, rows [][]string) {
	for i, r := range rows {
		if len(r) == 1 && i > 0 {
			// a workload's heading row: bold, across an otherwise empty row
			r = append([]string{"**" + r[0] + "**"}, make([]string, len(rows[0])-1)...)
		}
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = mdCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat("---|", len(r)) + "\n")
		}
	}
}

// mdCell escapes the one character that would end a table cell early.
// The rest is written as the terminal shows it: "<=" and "<c=4" start no
// HTML tag, and an underscore inside a word ("out_of_memory") no emphasis.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func verdictHeader(checks []slo.SLO) []string {
	h := []string{"load"}
	for _, c := range checks {
		h = append(h, c.Expr)
	}
	return append(h, "goodput req/s", "attained", "")
}

func verdictRow(pv slo.PointVerdict) []string {
	row := []string{loadLabel(pv.Load)}
	for _, c := range pv.Checks {
		row = append(row, checkCell(c))
	}
	att := "-"
	if pv.Attainment != nil {
		att = num(100**pv.Attainment, 1) + "%"
	}
	state := "pass"
	var why []string
	switch {
	case pv.Failing != "":
		why = append(why, "failing")
	case pv.Overloaded != "":
		why = append(why, "overloaded")
	}
	if pv.AllFailed {
		why = append(why, "all failed")
	}
	switch {
	case pv.Failing == "" && pv.Inconclusive():
		state = "INCONCLUSIVE (" + strings.Join(pv.Validity.Codes(), ", ") + ")"
	case len(why) > 0:
		state = "FAIL (" + strings.Join(why, ", ") + ")"
	case !pv.Pass:
		state = "FAIL"
	}
	return append(row, num(pv.Goodput, 2), att, state)
}

// validityLines name each inconclusive load's reasons in words, under
// the table whose last column gives their codes.
func validityLines(pts []slo.PointVerdict) [][2]string {
	var out [][2]string
	for _, pv := range pts {
		if pv.Failing == "" && pv.Inconclusive() {
			out = append(out, [2]string{"inconclusive", pv.Load.Label() + ": " + pv.Validity.String()})
		}
	}
	return out
}

// checkCell is "ok 312ms 0.31×": the verdict, the measured value in the
// SLO's unit, and the measured value as a multiple of the target.
func checkCell(c slo.Check) string {
	s := c.SLOValue()
	if c.Measured == nil {
		return "FAIL n/a"
	}
	mark := "ok"
	if !c.Pass {
		mark = "FAIL"
	}
	cell := mark + " " + s.Format(*c.Measured)
	if r := ratio(*c.Measured, c.Target); r != "" {
		cell += " " + r
	}
	return cell
}

// ratioLegend explains the one margin convention of the verdict table.
const ratioLegend = "N× is the measured value ÷ the SLO's target: a limit (<=) holds up to 1×, a floor (>=) from 1× up."

// ratio shows a measured value as a multiple of its target ("0.31×",
// "150×"), the same way for every SLO; "" for a zero target.
func ratio(measured, target float64) string {
	if target == 0 {
		return ""
	}
	r := measured / target
	prec := 2
	switch a := math.Abs(r); {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	return num(r, prec) + "×"
}

// intervalRows is the table of intervals, or nil when there are none.
func intervalRows(checks []slo.SLO, pts []slo.PointVerdict) [][]string {
	head := []string{"load"}
	for _, c := range checks {
		head = append(head, c.Expr)
	}
	rows := [][]string{head}
	found := false
	for _, pv := range pts {
		row := []string{pv.Load.Label() + " ×" + strconv.Itoa(len(pv.Points))}
		for _, c := range pv.Checks {
			if c.CI == nil {
				row = append(row, "-")
				continue
			}
			found = true
			s := c.SLOValue()
			row = append(row, fmt.Sprintf("%s–%s %s", s.Format(c.CI.Low), s.Format(c.CI.High), c.Certainty))
		}
		rows = append(rows, row)
	}
	if !found {
		return nil
	}
	return rows
}

func capacityLine(c slo.Capacity) string {
	var s string
	switch {
	case c.BoundedBy == slo.BoundedByInvalid && c.Found:
		s = fmt.Sprintf("at least %s; INCONCLUSIVE beyond it (%s)", c.Load.Text(record.LoadLong), c.Invalid)
	case c.BoundedBy == slo.BoundedByInvalid:
		s = fmt.Sprintf("INCONCLUSIVE (%s)", c.Invalid)
	case c.BoundedBy == slo.BoundedBySample && c.Found:
		s = fmt.Sprintf("at least %s (bounded by the sample, not an SLO: %s was not held)", c.Load.Text(record.LoadLong), c.NotHeld)
	case c.BoundedBy == slo.BoundedBySample:
		s = fmt.Sprintf("not judged (bounded by the sample: %s was not held)", c.NotHeld)
	case c.Found && c.BoundedBy == slo.BoundedBySearchLimit:
		s = fmt.Sprintf("at least %s (the search's limit; no load tried failed)", c.Load.Text(record.LoadLong))
	case c.Found && c.FailsAt != nil:
		s = fmt.Sprintf("%s (passes at %s; fails at %s: %s)", c.Load.Text(record.LoadLong), loadLabel(*c.Load), loadLabel(*c.FailsAt), failedList(c))
	case c.Found:
		s = fmt.Sprintf("at least %s (no load tried failed)", c.Load.Text(record.LoadLong))
	case c.FailsAt != nil:
		s = fmt.Sprintf("below %s (fails there: %s)", c.FailsAt.Text(record.LoadLong), failedList(c))
	default:
		s = "not measured"
	}
	if c.Method == "search" {
		s += fmt.Sprintf(" [search, %d probes]", c.Probes)
	}
	return s
}

// traceCapacityLine says a judged replay's capacity as a multiple of the
// trace's rate, the objective's one load (bench's Plan.JudgeTrace): how
// much more of the recorded traffic the server meets its objective at.
func traceCapacityLine(o *slo.Objective, c slo.Capacity) (string, bool) {
	if o.TraceRate <= 0 || !c.Found || c.Load == nil || c.Load.Rate <= 0 {
		return "", false
	}
	k := strconv.FormatFloat(c.Load.Rate/o.TraceRate, 'g', 3, 64)
	return fmt.Sprintf("capacity at ×%s the trace's rate (%s ÷ %s)", k, c.Load.Text(record.LoadLong),
		record.Load{Rate: o.TraceRate}.Text(record.LoadLong)), true
}

func failedList(c slo.Capacity) string {
	f := strings.Join(c.Shortfalls, ", ")
	if c.Failing != "" {
		f = strings.TrimPrefix(f+", failing, not overloaded: "+c.Failing, ", ")
	}
	if c.Overloaded != "" {
		f = strings.TrimPrefix(f+", overloaded: "+c.Overloaded, ", ")
	}
	return f
}

func saturationLine(s slo.Saturation) string {
	if !s.Found && s.Inconclusive != "" {
		line := "INCONCLUSIVE: not reached below " + s.Inconclusive
		if s.MaxThroughputLoad != nil {
			line += "; highest aggregate throughput below it at " + s.MaxThroughputLoad.Text(record.LoadLong)
		}
		return line
	}
	if !s.Found {
		if s.MaxThroughputLoad != nil {
			return "not reached; highest aggregate throughput at " + s.MaxThroughputLoad.Text(record.LoadLong)
		}
		return "not reached"
	}
	line := fmt.Sprintf("%s (output %s tok/s there, %s at %s)", s.Load.Text(record.LoadLong), num(s.OutputTPS, 1), num(s.NextTPS, 1), loadLabel(*s.Next))
	if s.SpeedP5 != nil {
		line += fmt.Sprintf("; p95 per-user speed there %s tok/s", num(*s.SpeedP5, 1))
	}
	return line
}

// loadLabel names a bare load: "c=4", "r=2/s", without its workload
// cell, which a matrix's verdict names where the load appears.
func loadLabel(l record.Load) string { return l.Text(record.LoadShort) }

// Rows writes a plain table: every column left-aligned and padded to its
// widest cell, the first row a heading.
func Rows(w io.Writer, rows [][]string) error {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], runes(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			line.WriteString(c + strings.Repeat(" ", width[i]-runes(c)+2))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvVerdict are the columns ObjectiveCSV adds to each point's row: the
// objective's verdict (the same on every row) and the verdict of the load
// the point measured (pooled over repeats, as in the verdict table).
var csvVerdict = []struct {
	name string
	get  func(v *slo.Verdict, pv *slo.PointVerdict) string
}{
	{"objective_holds", func(v *slo.Verdict, _ *slo.PointVerdict) string { return strconv.FormatBool(v.Holds) }},
	{"objective_conclusion", func(v *slo.Verdict, _ *slo.PointVerdict) string { return v.Conclusion }},
	{"capacity", func(v *slo.Verdict, _ *slo.PointVerdict) string { return capacityCell(v.Capacity) }},
	{"slo_pass", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return strconv.FormatBool(pv.Pass) }},
	{"slo_failed", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return strings.Join(pv.Failed, "; ") }},
	{"slo_shortfalls", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return strings.Join(pv.Shortfalls, "; ") }},
	{"slo_overloaded", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return pv.Overloaded }},
	{"slo_failing", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return pv.Failing }},
	{"slo_not_held", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return pv.NotHeld }},
	{"slo_invalid", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return strings.Join(pv.Validity.Codes(), "; ") }},
	{"goodput_rps", func(_ *slo.Verdict, pv *slo.PointVerdict) string { return num(pv.Goodput, 4) }},
	{"attainment", func(_ *slo.Verdict, pv *slo.PointVerdict) string {
		if pv.Attainment == nil {
			return ""
		}
		return num(*pv.Attainment, 4)
	}},
}

// ObjectiveCSV writes CSV's one row per point with the verdict in columns
// after the summary's: the objective's name, whether it holds at the
// target load and the capacity (the same on every row), then the verdict
// of the point's load — pass, the failed SLOs and how each missed, why it
// is overloaded, failing or not held, goodput and attainment. Still one
// table: a spreadsheet filters the passing loads on slo_pass.
func ObjectiveCSV(w io.Writer, r *slo.Report) error {
	rows := csvRows(r.Summary)
	rows[0] = append(rows[0], "objective")
	for _, c := range csvVerdict {
		rows[0] = append(rows[0], c.name)
	}
	byPoint := map[int]*slo.PointVerdict{}
	for i := range r.Verdict.Points {
		for _, idx := range r.Verdict.Points[i].Points {
			byPoint[idx] = &r.Verdict.Points[i]
		}
	}
	for i := range r.Summary.Points {
		row := append(rows[i+1], r.Objective.Name)
		pv := byPoint[r.Summary.Points[i].Index]
		for _, c := range csvVerdict {
			if pv == nil { // a point the verdict did not judge
				row = append(row, "")
				continue
			}
			row = append(row, c.get(cellVerdict(r.Verdict, pv.Load.Workload), pv))
		}
		rows[i+1] = row
	}
	return writeCSV(w, rows)
}
