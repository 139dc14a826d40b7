package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/telemetry"
)

// telCol is one column of the telemetry table: a figure of a point's
// telemetry, shown when some point has it.
type telCol struct {
	group, name string
	cell        func(t *telemetry.Point) string // "" when unknown
	// point, when set, writes the cell instead, knowing the client's
	// figures of the same point.
	point func(p *metrics.PointSummary) string
}

// telCols are the telemetry table's columns, by source. Server figures
// are summed over replicas; GPU figures are the busiest GPU's (memory,
// temperature) or all GPUs' (power, energy).
var telCols = []telCol{
	{"running", "mean/max", func(t *telemetry.Point) string {
		return meanMax(t.Server, func(s *telemetry.ServerPoint) *telemetry.MeanMax { return s.Running }, 1, 1)
	}, nil},
	{"waiting", "mean/max", func(t *telemetry.Point) string {
		return meanMax(t.Server, func(s *telemetry.ServerPoint) *telemetry.MeanMax { return s.Waiting }, 1, 1)
	}, nil},
	{"KV cache %", "mean/max", func(t *telemetry.Point) string {
		return meanMax(t.Server, func(s *telemetry.ServerPoint) *telemetry.MeanMax { return s.KVCacheUsage }, 100, 1)
	}, nil},
	{"preempt", "", func(t *telemetry.Point) string {
		return ptrNum(serverF(t, func(s *telemetry.ServerPoint) *float64 { return s.Preemptions }), 1, 0)
	}, nil},
	{"server TTFT ms", "p50", func(t *telemetry.Point) string { return quantile(t, true, "p50") },
		func(p *metrics.PointSummary) string { return serverQuantile(p, true, "p50") }},
	{"", "p99", func(t *telemetry.Point) string { return quantile(t, true, "p99") },
		func(p *metrics.PointSummary) string { return serverQuantile(p, true, "p99") }},
	{"server queue ms", "p50", func(t *telemetry.Point) string { return quantile(t, false, "p50") },
		func(p *metrics.PointSummary) string { return serverQuantile(p, false, "p50") }},
	{"", "p99", func(t *telemetry.Point) string { return quantile(t, false, "p99") },
		func(p *metrics.PointSummary) string { return serverQuantile(p, false, "p99") }},
	{"GPU util %", "mean", func(t *telemetry.Point) string {
		return gpuMean(t, func(g telemetry.GPUPoint) *float64 { return g.UtilizationMean }, 100)
	}, nil},
	{"power W", "mean", func(t *telemetry.Point) string {
		return gpuSum(t, func(g telemetry.GPUPoint) *float64 { return g.PowerWMean })
	}, nil},
	{"J/tok", "", func(t *telemetry.Point) string { return ptrNum(t.EnergyJPerOutputToken, 1, 2) }, nil},
	{"GPU °C", "max", func(t *telemetry.Point) string {
		return gpuMax(t, func(g telemetry.GPUPoint) *float64 { return g.TemperatureCMax })
	}, nil},
	{"throttled s", "", func(t *telemetry.Point) string {
		return gpuMax(t, func(g telemetry.GPUPoint) *float64 { return g.ThrottleS })
	}, nil},
	{"server RSS GiB", "peak", func(t *telemetry.Point) string {
		return hostF(t, func(h *telemetry.HostPoint) *float64 { return h.ServerRSSBytesMax }, 1.0/(1<<30), 2)
	}, nil},
	{"server CPU %", "mean", func(t *telemetry.Point) string {
		return hostF(t, func(h *telemetry.HostPoint) *float64 { return h.ServerCPUPercentMean }, 1, 0)
	}, nil},
	{"RAM free GiB", "min", func(t *telemetry.Point) string {
		return hostF(t, func(h *telemetry.HostPoint) *float64 { return h.RAMAvailableBytesMin }, 1.0/(1<<30), 1)
	}, nil},
	{"client CPU %", "mean/max", func(t *telemetry.Point) string {
		if t.Client == nil {
			return ""
		}
		return fmt.Sprintf("%.0f/%.0f", t.Client.CPUPercentMean, t.Client.CPUPercentMax)
	}, nil},
	{"events", "", func(t *telemetry.Point) string { return eventsCell(t.Events) }, nil},
}

// writeTelemetry writes, when some point has telemetry, one row per point
// of what the server, GPUs, host and client showed over its window.
func writeTelemetry(b *strings.Builder, s *metrics.Summary, markdown bool) {
	var cols []telCol
	for _, c := range telCols {
		for i := range s.Points {
			if t := s.Points[i].Telemetry; t != nil && c.cell(t) != "" {
				cols = append(cols, c)
				break
			}
		}
	}
	if len(cols) == 0 {
		return
	}
	head := []string{"load"}
	groups := []string{""}
	for _, c := range cols {
		groups, head = append(groups, c.group), append(head, c.name)
	}
	rows := [][]string{groups, head}
	for i := range s.Points {
		row := []string{LoadLabel(&s.Points[i])}
		for _, c := range cols {
			cell := ""
			if t := s.Points[i].Telemetry; t != nil {
				cell = c.cell(t)
				if c.point != nil {
					cell = c.point(&s.Points[i])
				}
			}
			row = append(row, orDash(cell))
		}
		rows = append(rows, row)
	}
	const title = "Telemetry over each point's window (model time; a server percentile is read from histogram buckets: " +
		"[lo–hi] is the bucket holding it where that is too wide to place a value, and ! marks one that the client's TTFT of the same requests rules out):"
	writeSection(b, title, rows, markdown)
}

// writeSection writes a titled table of rows (group headings, names,
// then data): as Markdown, or aligned and indented two spaces.
func writeSection(b *strings.Builder, title string, rows [][]string, markdown bool) {
	if markdown {
		b.WriteString("\n" + title + "\n\n")
		writeMarkdownRows(b, rows)
		return
	}
	b.WriteString("\n" + title + "\n")
	writeIndented(b, rows)
}

// writeIndented writes rows as writeAligned does, each line indented two
// spaces.
func writeIndented(b *strings.Builder, rows [][]string) {
	var t strings.Builder
	writeAligned(&t, rows)
	for _, line := range strings.SplitAfter(t.String(), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
}

// writeMarkdownRows writes rows (group headings, names, then data) as a
// Markdown table, a group's name leading its columns' headings.
func writeMarkdownRows(b *strings.Builder, rows [][]string) {
	head := make([]string, len(rows[0]))
	group := ""
	for i := range head {
		if rows[0][i] != "" {
			group = rows[0][i]
		}
		head[i] = strings.TrimSpace(group + " " + rows[1][i])
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(head)) + "\n")
	for _, r := range rows[2:] {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}
