package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
)

// csvDists are the distributions written to CSV, each as one column per
// statistic (e.g. ttft_ms_p95): the rows of metrics.Table marked CSV.
var csvDists = func() []*metrics.Metric {
	var out []*metrics.Metric
	for i := range metrics.Table {
		if m := &metrics.Table[i]; m.CSV {
			out = append(out, m)
		}
	}
	return out
}()

var csvStats = []string{"mean", "p5", "p50", "p90", "p95", "p99", "p999", "max"}

var csvScalars = []struct {
	name string
	get  func(p *metrics.PointSummary) string
}{
	{"index", func(p *metrics.PointSummary) string { return strconv.Itoa(p.Index) }},
	{"concurrency", func(p *metrics.PointSummary) string { return strconv.Itoa(p.Load.Concurrency) }},
	{"rate", func(p *metrics.PointSummary) string { return num(p.Load.Rate, 3) }},
	{"completed", func(p *metrics.PointSummary) string { return strconv.Itoa(p.Requests.Completed) }},
	{"failed", func(p *metrics.PointSummary) string { return strconv.Itoa(p.Requests.Failed) }},
	{"error_rate", func(p *metrics.PointSummary) string { return num(p.ErrorRate, 4) }},
	{"all_failed", func(p *metrics.PointSummary) string { return strconv.FormatBool(p.AllFailed) }},
	{"errors", func(p *metrics.PointSummary) string { return errorList(p.Requests.Errors) }},
	{"output_tps", func(p *metrics.PointSummary) string { return num(p.OutputTPS, 3) }},
	{"input_tps", func(p *metrics.PointSummary) string { return num(p.InputTPS, 3) }},
	{"request_rate", func(p *metrics.PointSummary) string { return num(p.RequestRate, 4) }},
	{"requests_per_minute", func(p *metrics.PointSummary) string { return num(p.RequestsPerMinute, 3) }},
	{"concurrency_achieved", func(p *metrics.PointSummary) string { return num(p.ConcurrencyAchieved, 3) }},
	{"duration_s", func(p *metrics.PointSummary) string { return num(p.DurationS, 3) }},
}

// CSV writes one row per load point: scalars, then every statistic of every
// distribution. Empty distributions give empty cells.
func CSV(w io.Writer, s *metrics.Summary) error {
	return writeCSV(w, csvRows(s))
}

// csvRows is CSV's table, the first row its heading.
func csvRows(s *metrics.Summary) [][]string {
	var head []string
	for _, c := range csvScalars {
		head = append(head, c.name)
	}
	for _, d := range csvDists {
		for _, st := range csvStats {
			head = append(head, d.Field+"_"+st)
		}
	}
	rows := [][]string{head}
	for i := range s.Points {
		p := &s.Points[i]
		var row []string
		for _, c := range csvScalars {
			row = append(row, c.get(p))
		}
		for _, d := range csvDists {
			dd := d.Dist(p)
			for _, st := range csvStats {
				v, ok := dd.Get(st)
				if !ok {
					row = append(row, "")
					continue
				}
				row = append(row, num(v, 3))
			}
		}
		rows = append(rows, row)
	}
	return addDriftCSV(addWorkloadCSV(rows, s), s)
}

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

// Markdown writes what Text writes in GitHub-flavoured Markdown: the
// header line, the table, errors by class, cold start and the warnings
// under their own heading.
func Markdown(w io.Writer, s *metrics.Summary) error {
	var b strings.Builder
	if h := Header(s); h != "" {
		b.WriteString(h + "\n\n")
	}
	writeAboveTable(&b, s, "> ")
	writeDriftTop(&b, s, "> ")
	cols := tableColumns(s)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = strings.TrimSpace(c.group + " " + c.name)
		if c.group == "" && i > 0 {
			head[i] = strings.TrimSpace(prevGroup(cols, i) + " " + c.name)
		}
	}
	writeMarkdownPoints(&b, s, cols, head)
	if note := prefillNote(s); note != "" {
		b.WriteString("\n" + note)
	}
	writeErrors(&b, s, "- ")
	writeWarmup(&b, s, "- ")
	writePrefixCache(&b, s, true)
	writeTelemetry(&b, s, true)
	writeSlices(&b, s, true)
	writeWorkers(&b, s, true)
	if warn := warnings(s); len(warn) > 0 {
		b.WriteString("\n### Warnings\n\n")
		for _, x := range warn {
			b.WriteString("- " + x + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownPoints writes the table of points under head; in a matrix,
// one table per workload cell, each under a heading of its own.
func writeMarkdownPoints(b *strings.Builder, s *metrics.Summary, cols []column, head []string) {
	table := func(rows [][]string) {
		b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
		for range cols {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, r := range rows {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
	}
	rows := tableRows(s, cols, "")
	if workloadGroups(s) == nil {
		table(rows)
		return
	}
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && len(rows[j]) > 1 {
			j++
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("#### " + strings.ToUpper(rows[i][0][:1]) + rows[i][0][1:] + "\n\n")
		table(rows[i+1 : j])
		i = j
	}
}

// prevGroup returns the group heading that column i continues.
func prevGroup(cols []column, i int) string {
	for ; i >= 0; i-- {
		if cols[i].group != "" {
			return cols[i].group
		}
	}
	return ""
}
