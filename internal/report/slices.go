package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
)

// Slices of a sustained run (points[].slices, points[].drift): a table per
// point, its drift line under it, and a detected drift as a warning above
// the main table, where it cannot be missed.

// sliceColumn is one column of a point's slice table; tel marks the
// telemetry columns, shown only when some slice has the figure.
type sliceColumn struct {
	group, name string
	tel         bool
	value       func(s *metrics.Slice) string
}

// seconds writes a slice's bound to the millisecond, without trailing
// zeros: "60", "6.041".
func seconds(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

func optNum(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return num(*v, prec)
}

// telNum reads a slice's telemetry figure, "-" when absent.
func telNum(get func(t *metrics.SliceTelemetry) *float64, scale float64, prec int) func(s *metrics.Slice) string {
	return func(s *metrics.Slice) string {
		if s.Telemetry == nil || get(s.Telemetry) == nil {
			return "-"
		}
		return num(*get(s.Telemetry)*scale, prec)
	}
}

var sliceColumns = []sliceColumn{
	{"slice", "", false, func(s *metrics.Slice) string { return strconv.Itoa(s.Index) }},
	{"time s", "from", false, func(s *metrics.Slice) string { return seconds(s.StartS) }},
	{"", "to", false, func(s *metrics.Slice) string { return seconds(s.EndS) }},
	{"phase", "", false, func(s *metrics.Slice) string { return s.Phase }},
	{"ok", "", false, func(s *metrics.Slice) string { return strconv.Itoa(s.Completed) }},
	{"errors", "", false, func(s *metrics.Slice) string { return strconv.Itoa(s.Errors) }},
	{"output tok/s", "aggregate", false, func(s *metrics.Slice) string { return num(s.OutputTPS, 1) }},
	{"in flight", "mean", false, func(s *metrics.Slice) string { return num(s.InFlightMean, 1) }},
	{"TTFT ms", "p50", false, func(s *metrics.Slice) string { return optNum(s.TTFTP50, 0) }},
	{"", "p95", false, func(s *metrics.Slice) string { return optNum(s.TTFTP95, 0) }},
	{"speed tok/s/req", "p50", false, func(s *metrics.Slice) string { return optNum(s.DecodeP50, 1) }},
	{"GPU °C", "max", true, telNum(func(t *metrics.SliceTelemetry) *float64 { return t.GPUTemperatureCMax }, 1, 0)},
	{"GPU W", "mean", true, telNum(func(t *metrics.SliceTelemetry) *float64 { return t.GPUPowerWMean }, 1, 0)},
	{"throttled s", "", true, telNum(func(t *metrics.SliceTelemetry) *float64 { return t.GPUThrottleS }, 1, 1)},
	{"KV cache %", "max", true, telNum(func(t *metrics.SliceTelemetry) *float64 { return t.KVCacheUsageMax }, 100, 1)},
}

// sliceCols are the columns of a point's table: a telemetry one only when
// some slice has its figure (a server's KV cache without GPU readings
// shows no GPU columns).
func sliceCols(p *metrics.PointSummary) []sliceColumn {
	var out []sliceColumn
	for _, c := range sliceColumns {
		if !c.tel || anySlice(p.Slices, c) {
			out = append(out, c)
		}
	}
	return out
}

func anySlice(ss []metrics.Slice, c sliceColumn) bool {
	for i := range ss {
		if c.value(&ss[i]) != "-" {
			return true
		}
	}
	return false
}

// sliceTitle introduces a point's slices.
func sliceTitle(s *metrics.Summary, p *metrics.PointSummary) string {
	width := "--slice"
	if s.Run != nil && s.Run.SliceS > 0 {
		width = strconv.FormatFloat(s.Run.SliceS, 'g', -1, 64) + " s"
	}
	return fmt.Sprintf("Slices of %s at %s (model time from the point's first send; only steady slices are judged for drift):", width, LoadLabel(p))
}

// writeSlices writes each sliced point's table and drift line, as text
// (aligned columns) or Markdown (a table).
func writeSlices(b *strings.Builder, s *metrics.Summary, markdown bool) {
	for i := range s.Points {
		p := &s.Points[i]
		if len(p.Slices) == 0 {
			continue
		}
		cols := sliceCols(p)
		b.WriteString("\n" + sliceTitle(s, p) + "\n")
		if markdown {
			b.WriteString("\n")
			writeSliceMarkdown(b, p, cols)
		} else {
			writeSliceText(b, p, cols)
		}
		if p.Drift != nil {
			lead := "  drift: "
			if markdown {
				lead = "\n**Drift:** "
			}
			b.WriteString(lead + p.Drift.Text + "\n")
		}
	}
}

func writeSliceText(b *strings.Builder, p *metrics.PointSummary, cols []sliceColumn) {
	rows := [][]string{make([]string, len(cols)), make([]string, len(cols))}
	for i, c := range cols {
		rows[0][i], rows[1][i] = c.group, c.name
	}
	for k := range p.Slices {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.value(&p.Slices[k])
		}
		rows = append(rows, row)
	}
	writeIndented(b, rows)
}

func writeSliceMarkdown(b *strings.Builder, p *metrics.PointSummary, cols []sliceColumn) {
	head := make([]string, len(cols))
	group := ""
	for i, c := range cols {
		if c.group != "" {
			group = c.group
		}
		head[i] = strings.TrimSpace(group + " " + c.name)
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(cols)) + "\n")
	for k := range p.Slices {
		cells := make([]string, len(cols))
		for j, c := range cols {
			cells[j] = c.value(&p.Slices[k])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// isDrift tells a drift warning from the others.
func isDrift(w string) bool { return strings.HasPrefix(w, metrics.DriftWarningPrefix) }

// driftWarnings are the detected drifts, each with its point's label, for
// the top of the output.
func driftWarnings(s *metrics.Summary) []string {
	var out []string
	for i := range s.Points {
		p := &s.Points[i]
		for _, w := range p.Warnings {
			if isDrift(w) {
				out = append(out, LoadLabel(p)+": "+w)
			}
		}
	}
	return out
}

// writeDriftTop writes the detected drifts under the header.
func writeDriftTop(b *strings.Builder, s *metrics.Summary, bullet string) {
	for _, w := range driftWarnings(s) {
		b.WriteString(bullet + "WARNING " + w + "\n")
	}
	if len(driftWarnings(s)) > 0 {
		b.WriteString("\n")
	}
}

// driftCSV are the columns CSV adds when a point was sliced: the drift
// check's figures (a per-slice table does not fit one row per point;
// summary.json has the slices).
var driftCSV = []struct {
	name string
	get  func(d *metrics.Drift) string
}{
	{"drift_slices", func(d *metrics.Drift) string { return strconv.Itoa(d.Slices) }},
	{"drift_warmup_slices", func(d *metrics.Drift) string { return strconv.Itoa(d.WarmupSlices) }},
	{"drift_judged", func(d *metrics.Drift) string { return strconv.FormatBool(d.Judged) }},
	{"drift_detected", func(d *metrics.Drift) string { return strconv.FormatBool(d.Detected) }},
	{"drift_output_tps_slope_per_h", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.OutputTPS }, func(t *metrics.Trend) float64 { return t.SlopePerH })},
	{"drift_output_tps_slope_per_h_ci_lo", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.OutputTPS }, func(t *metrics.Trend) float64 { return t.SlopePerHCI[0] })},
	{"drift_output_tps_slope_per_h_ci_hi", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.OutputTPS }, func(t *metrics.Trend) float64 { return t.SlopePerHCI[1] })},
	{"drift_output_tps_relative_change", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.OutputTPS }, func(t *metrics.Trend) float64 { return t.Change })},
	{"drift_ttft_ms_p95_slope_per_h", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.TTFTP95 }, func(t *metrics.Trend) float64 { return t.SlopePerH })},
	{"drift_ttft_ms_p95_slope_per_h_ci_lo", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.TTFTP95 }, func(t *metrics.Trend) float64 { return t.SlopePerHCI[0] })},
	{"drift_ttft_ms_p95_slope_per_h_ci_hi", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.TTFTP95 }, func(t *metrics.Trend) float64 { return t.SlopePerHCI[1] })},
	{"drift_ttft_ms_p95_relative_change", trendCSV(func(d *metrics.Drift) *metrics.Trend { return d.TTFTP95 }, func(t *metrics.Trend) float64 { return t.Change })},
}

func trendCSV(tr func(*metrics.Drift) *metrics.Trend, v func(*metrics.Trend) float64) func(*metrics.Drift) string {
	return func(d *metrics.Drift) string {
		if t := tr(d); t != nil {
			return num(v(t), 4)
		}
		return ""
	}
}

// addDriftCSV appends the drift columns to CSV's rows when some point was
// sliced; rows[0] is the heading, rows[i+1] point i.
func addDriftCSV(rows [][]string, s *metrics.Summary) [][]string {
	sliced := false
	for i := range s.Points {
		sliced = sliced || s.Points[i].Drift != nil
	}
	if !sliced {
		return rows
	}
	for _, c := range driftCSV {
		rows[0] = append(rows[0], c.name)
		for i := range s.Points {
			cell := ""
			if d := s.Points[i].Drift; d != nil {
				cell = c.get(d)
			}
			rows[i+1] = append(rows[i+1], cell)
		}
	}
	return rows
}
