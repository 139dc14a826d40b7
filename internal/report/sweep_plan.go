package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sweep"
)

// planTitle heads the table that sets each configuration's plan
// (--plan-config) beside its measurement, in the text and on the page.
const planTitle = "Planned beside measured"

// planNotes say what the table's figures are, under it.
var planNotes = []string{
	"memory: the plan's need per GPU against the run's peak, GPU memory summed over the GPUs sampled (the ratio is over the need of all the plan's GPUs), else the server's RSS (host memory: no ratio)",
	"speed: the plan's per-user decode tok/s against the measured p50, at the configuration's capacity, else its saturation, else its first load point",
}

var planColumns = []string{"config", "device", "GPUs", "planned mem/GPU", "measured peak", "peak/planned", "load", "planned tok/s/user", "measured", "measured/planned"}

// planTable is the table's rows, one per planned configuration, and its
// notes: each plan's error and warnings. No row: no plan was asked for.
func planTable(f *sweep.File) (rows [][]string, notes []string) {
	for _, c := range f.Configs {
		p := c.Plan
		if p == nil {
			continue
		}
		row := []string{c.Name, orDash(p.Device), "-", "-", "-", "-", "-", "-", "-", "-"}
		if p.GPUs > 0 {
			row[2] = strconv.Itoa(p.GPUs)
		}
		if p.Memory != nil {
			v := float64(p.Memory.PerGPUBytes)
			row[3] = bytesCell(&v)
		}
		if m := p.PeakMemory; m != nil {
			row[4], row[5] = bytesCell(&m.Bytes)+" "+memorySource(m.Source), fnum(m.Ratio, 2)
		}
		if d := p.DecodeAt; d != nil {
			row[6], row[7], row[8] = d.Load.Text(record.LoadShort), pairCell(d.DecodeTPS.Predicted, 1), pairCell(d.DecodeTPS.Measured, 1)
			row[9] = pairCell(d.DecodeTPS.Ratio, 2)
		} else if p.DecodeTPS != nil {
			row[7] = fnum(p.DecodeTPS, 1)
		}
		rows = append(rows, row)
		if p.Error != nil {
			notes = append(notes, fmt.Sprintf("%s: the plan failed: %s", c.Name, *p.Error))
		}
		for _, w := range p.Warnings {
			notes = append(notes, c.Name+": "+w)
		}
	}
	return rows, notes
}

func memorySource(s string) string {
	if s == sweep.MemoryServerRSS {
		return "RSS"
	}
	return "GPU"
}

// pairCell is one side of a plan.Pair (0: missing).
func pairCell(v float64, prec int) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// sweepPlans writes the table of plans beside measurements, when the
// sweep planned its configurations.
func sweepPlans(b *strings.Builder, f *sweep.File, md bool) {
	rows, notes := planTable(f)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (servebench plan):\n\n", planTitle)
	sweepTable(b, append([][]string{planColumns}, rows...), md)
	if md {
		b.WriteString("\n") // a list after a table, not a row of it
	}
	bullet := listItem(md)
	for _, n := range append(append([]string{}, planNotes...), notes...) {
		b.WriteString(bullet + n + "\n")
	}
}

// planHTMLTable is the page's table of plans beside measurements; nil
// when the sweep planned none.
func planHTMLTable(f *sweep.File) *HTMLTable {
	rows, notes := planTable(f)
	if len(rows) == 0 {
		return nil
	}
	return &HTMLTable{Title: planTitle, Columns: planColumns, Rows: rows, Notes: append(append([]string{}, planNotes...), notes...)}
}
