package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// pointGroup is the points of one workload cell of a matrix.
type pointGroup struct {
	workload string
	points   []*metrics.PointSummary
}

// workloadGroups are a matrix's points by workload cell, in the order the
// cells ran (run.json's workloads, else as the points come); nil when the
// run has one workload, whose output has no groups.
func workloadGroups(s *metrics.Summary) []pointGroup {
	var order []string
	if s.Run != nil {
		for _, c := range s.Run.Workloads {
			order = append(order, c.Label)
		}
	}
	for i := range s.Points {
		if w := s.Points[i].Load.Workload; !slices.Contains(order, w) {
			order = append(order, w)
		}
	}
	if len(order) == 0 || (len(order) == 1 && order[0] == "") {
		return nil
	}
	var out []pointGroup
	for _, w := range order {
		g := pointGroup{workload: w}
		for i := range s.Points {
			if s.Points[i].Load.Workload == w {
				g.points = append(g.points, &s.Points[i])
			}
		}
		if len(g.points) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// workloadHeading introduces a cell's rows.
func workloadHeading(w string) string {
	if w == "" {
		return "workload (none named)"
	}
	return "workload " + w
}

// pointRow is a point's row of the table; in a matrix, under its cell's
// heading, the load column names the load alone, after indent.
func pointRow(cols []column, p *metrics.PointSummary, grouped bool, indent string) []string {
	if grouped {
		q := *p
		q.Load.Workload = ""
		p = &q
	}
	row := make([]string, len(cols))
	for j, c := range cols {
		row[j] = c.value(p)
	}
	if grouped {
		row[0] = indent + row[0]
	}
	return row
}

// tableRows are the table's rows below its headings: one per point, and
// in a matrix a one-cell heading row before each cell's points, whose
// load cells start with indent.
func tableRows(s *metrics.Summary, cols []column, indent string) [][]string {
	groups := workloadGroups(s)
	var rows [][]string
	if groups == nil {
		for i := range s.Points {
			rows = append(rows, pointRow(cols, &s.Points[i], false, ""))
		}
		return rows
	}
	for _, g := range groups {
		rows = append(rows, []string{workloadHeading(g.workload)})
		for _, p := range g.points {
			rows = append(rows, pointRow(cols, p, true, indent))
		}
	}
	return rows
}

// matrixText describes a matrix's workload for the header: its cells, in
// the order they ran.
func matrixText(run *record.Run) string {
	labels := run.WorkloadLabels()
	return fmt.Sprintf("%d workloads (%s)", len(labels), strings.Join(labels, ", "))
}

// addWorkloadCSV adds, in a matrix, the columns workload, prompt_tokens
// and output_tokens after index, so that a spreadsheet can pivot by
// either length; a run with one workload keeps its columns as they were.
func addWorkloadCSV(rows [][]string, s *metrics.Summary) [][]string {
	if workloadGroups(s) == nil {
		return rows
	}
	rows[0] = slices.Insert(rows[0], 1, "workload", "prompt_tokens", "output_tokens")
	for i := range s.Points {
		w := s.Points[i].Load.Workload
		in, out, _ := record.ParseWorkloadLabel(w)
		rows[i+1] = slices.Insert(rows[i+1], 1, w, in, out)
	}
	return rows
}

// cellVerdict is the verdict of a point's workload cell in a matrix, or
// the run's verdict when it has one workload.
func cellVerdict(v *slo.Verdict, workload string) *slo.Verdict {
	for _, cv := range v.Workloads {
		if cv.Workload == workload {
			return cv
		}
	}
	return v
}

// matrixVerdict is a matrix's verdict table (after head) and named lines:
// each cell's points under its heading, then each cell's capacity and
// saturation, then the lowest capacity, the load every workload meets.
func matrixVerdict(head [][]string, v *slo.Verdict) (table [][]string, lines [][2]string) {
	table = head
	for _, cv := range v.Workloads {
		table = append(table, []string{workloadHeading(cv.Workload)})
		for _, pv := range cv.Points {
			table = append(table, verdictRow(pv))
		}
	}
	for _, cv := range v.Workloads {
		lines = append(lines, [2]string{"capacity " + cv.Workload, capacityLine(cv.Capacity)},
			[2]string{"saturation " + cv.Workload, saturationLine(cv.Saturation)})
	}
	low := capacityLine(v.Capacity)
	if l := v.Capacity.Load; l != nil && v.Capacity.Found {
		low = l.Workload + ": " + low
	} else if l := v.Capacity.FailsAt; l != nil {
		low = l.Workload + ": " + low
	}
	return table, append(lines, [2]string{"capacity (every workload)", low})
}

// indentGrouped indents the first cell of the rows under a workload's
// heading row, for the terminal.
func indentGrouped(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	grouped := false
	for i, r := range rows {
		if len(r) == 1 && i > 0 {
			grouped = true
		} else if grouped && i > 0 {
			r = append([]string{"  " + r[0]}, r[1:]...)
		}
		out[i] = r
	}
	return out
}

// workloadCount is the title's count of a matrix's workloads, "" without one.
func workloadCount(v *slo.Verdict) string {
	if v.Workloads == nil {
		return ""
	}
	return fmt.Sprintf(" · %d workloads", len(v.Workloads))
}
