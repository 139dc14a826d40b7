// Package report renders every result servebench prints, in each format it
// prints it: a run's summary (a terminal table, JSON, CSV, Markdown, and the
// HTML page with its charts and telemetry), an objective's verdict (text,
// Markdown, CSV, JSON), a capacity decision (text, JSON), a comparison of
// two runs (text, JSON, and tables on the HTML page), a capacity plan and a
// plan set against a run (text, JSON), a calibration (text, JSON), and the
// stored history (text, JSON).
//
// The rule: domain packages (metrics, slo, compare, plan, calib, store,
// ...) compute and return values and print nothing; report turns those
// values into bytes and computes nothing a reader would call a result. A
// renderer is a func(io.Writer, *T) error, or returns the cells of an HTML
// table; it formats what the owning package produced, with that package's
// units and wording where the package defines them. Files a package reads
// back (records, run.json, sim's config YAML) are formats, not renderings:
// their owner writes them.
package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/stats"
)

// Renderer writes a summary in one format.
type Renderer func(io.Writer, *metrics.Summary) error

// Formats maps format names (the --format flag) to renderers.
var Formats = map[string]Renderer{
	"text":     Text,
	"json":     JSON,
	"csv":      CSV,
	"markdown": Markdown,
}

// JSON writes the summary as indented JSON (the summary.json contract).
func JSON(w io.Writer, s *metrics.Summary) error {
	return writeJSON(w, s, false)
}

// column is one column of the per-point table: a two-line header and a
// value taken from a point.
type column struct {
	group, name string
	value       func(p *metrics.PointSummary) string
}

func dist(d stats.Dist, key string, prec int) string {
	v, ok := d.Get(key)
	if !ok {
		return "-"
	}
	return num(v, prec)
}

func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// LoadLabel names a load point the way a user set it: "c=4" or "r=2/s".
func LoadLabel(p *metrics.PointSummary) string { return p.Load.Label() }

// loadCell is the table's load column: the nominal load, and beside it the
// load achieved when the point did not hold it ("c=64 (6.3 in flight)").
func loadCell(p *metrics.PointSummary) string {
	switch {
	case p.LoadHeld || p.AllFailed || p.Requests.Completed+p.Requests.Failed == 0:
		return LoadLabel(p)
	case p.Load.Concurrency > 0:
		return fmt.Sprintf("%s (%.1f in flight)", LoadLabel(p), p.ConcurrencyAchieved)
	}
	return fmt.Sprintf("%s (%s/s sent)", LoadLabel(p), strconv.FormatFloat(p.AchievedRate, 'g', 3, 64))
}

func errorsCell(p *metrics.PointSummary) string {
	cell := fmt.Sprintf("%d (%.1f%%)", p.Requests.Failed, 100*p.ErrorRate)
	switch {
	case p.Requests.Failed == 0:
		cell = "0"
	case p.AllFailed:
		cell = fmt.Sprintf("%d (ALL FAILED)", p.Requests.Failed)
	}
	if n := p.Requests.Cancelled; n > 0 {
		// cancelled requests are no server error, but never silent
		cell += fmt.Sprintf(" +%d cancelled", n)
	}
	return cell
}

// columns is the table of issue's shape: per-request speed falling while
// aggregate throughput rises and saturates is visible at a glance.
var columns = []column{
	{"load", "", loadCell},
	// Per-request speed is named as SLOs name it: "speed p95" is the speed
	// 95% of requests reached, the distribution's 5th percentile.
	{"speed tok/s/req", "p50", func(p *metrics.PointSummary) string { return dist(p.DecodeTPSReq, "p50", 1) }},
	{"", "p95", func(p *metrics.PointSummary) string { return dist(p.DecodeTPSReq, "p5", 1) }},
	{"output tok/s", "aggregate", func(p *metrics.PointSummary) string { return num(p.OutputTPS, 1) }},
	// Prompt tokens over TTFT: queueing and request overhead included, so
	// not the server's prefill speed (that is prefillColumn's).
	{"prompt/TTFT tok/s", "p50", func(p *metrics.PointSummary) string { return dist(p.PrefillTPS, "p50", 0) }},
	{"TTFT ms", "p50", func(p *metrics.PointSummary) string { return dist(p.TTFT, "p50", 0) }},
	{"", "p95", func(p *metrics.PointSummary) string { return dist(p.TTFT, "p95", 0) }},
	{"", "p99", func(p *metrics.PointSummary) string { return dist(p.TTFT, "p99", 0) }},
	{"ITL ms", "p95", func(p *metrics.PointSummary) string { return dist(p.ITL, "p95", 1) }},
	{"", "p99", func(p *metrics.PointSummary) string { return dist(p.ITL, "p99", 1) }},
	{"E2E ms", "p95", func(p *metrics.PointSummary) string { return dist(p.E2E, "p95", 0) }},
	{"", "p99", func(p *metrics.PointSummary) string { return dist(p.E2E, "p99", 0) }},
	{"req/min", "", func(p *metrics.PointSummary) string { return num(p.RequestsPerMinute, 1) }},
	{"ok", "", func(p *metrics.PointSummary) string { return strconv.Itoa(p.Requests.Completed) }},
	{"errors", "", errorsCell},
}

// Text writes the terminal table, one row per load point, followed by the
// warnings. Columns are aligned by display width, not bytes.
func Text(w io.Writer, s *metrics.Summary) error {
	var b strings.Builder
	if h := Header(s); h != "" {
		b.WriteString(h + "\n\n")
	}
	writeAboveTable(&b, s, "")
	writeDriftTop(&b, s, "")
	cols := tableColumns(s)
	rows := [][]string{make([]string, len(cols)), make([]string, len(cols))}
	for i, c := range cols {
		rows[0][i], rows[1][i] = c.group, c.name
	}
	rows = append(rows, tableRows(s, cols, "  ")...)
	writeAligned(&b, rows)
	b.WriteString(prefillNote(s))
	writeErrors(&b, s, "  ")
	writeWarmup(&b, s, "  ")
	writePrefixCache(&b, s, false)
	writeTrace(&b, s)
	writeTelemetry(&b, s, false)
	writeSlices(&b, s, false)
	writeWorkers(&b, s, false)
	warn := warnings(s)
	if len(warn) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, x := range warn {
			b.WriteString("  - " + x + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// warnings lists the run's and every point's warnings; a warning that
// several points share is printed once, prefixed with all their labels.
// A drift and the client's saturation are not among them: they are
// printed above the table.
func warnings(s *metrics.Summary) []string {
	var out []string
	for _, x := range s.Warnings {
		if !isAboveTable(x) {
			out = append(out, x)
		}
	}
	var order []string
	labels := map[string][]string{}
	for i := range s.Points {
		p := &s.Points[i]
		for _, x := range p.Warnings {
			if isDrift(x) {
				continue
			}
			if _, seen := labels[x]; !seen {
				order = append(order, x)
			}
			labels[x] = append(labels[x], LoadLabel(p))
		}
	}
	for _, x := range order {
		out = append(out, strings.Join(labels[x], ", ")+": "+x)
	}
	return out
}

// listItem starts an item of a list under a heading: indented for the
// terminal, a Markdown list item in Markdown.
func listItem(md bool) string {
	if md {
		return "- "
	}
	return "  - "
}

// writeAligned writes rows as space-separated columns: the first column
// left-aligned, the others right-aligned, widths by rune count. rows[0]
// holds group headings, each spanning its column and the unnamed ones after
// it; a long heading widens the group's columns evenly. A row of one cell
// (a workload's heading in a matrix) is written as it is, and sets no width.
func writeAligned(b *strings.Builder, rows [][]string) {
	const sep = 2
	width := make([]int, len(rows[0]))
	for _, r := range rows[1:] {
		if len(r) == 1 && len(width) > 1 {
			continue
		}
		for i, c := range r {
			width[i] = max(width[i], runes(c))
		}
	}
	groups := rows[0]
	for i := 0; i < len(groups); {
		j := i + 1
		for j < len(groups) && groups[j] == "" {
			j++
		}
		span := (j - i - 1) * sep
		for k := i; k < j; k++ {
			span += width[k]
		}
		// Spread any excess of a long heading over the group's columns.
		for extra, k := runes(groups[i])-span, i; extra > 0; extra, k = extra-1, k+1 {
			if k == j {
				k = i
			}
			width[k]++
		}
		i = j
	}
	// Each heading starts where its group's first column starts.
	total := 0
	start := make([]int, len(width))
	for i, w := range width {
		start[i] = total
		total += w + sep
	}
	head := []rune(strings.Repeat(" ", total))
	for i, g := range groups {
		copy(head[start[i]:], []rune(g))
	}
	b.WriteString(strings.TrimRight(string(head), " ") + "\n")
	for _, r := range rows[1:] {
		if len(r) == 1 && len(width) > 1 {
			b.WriteString(r[0] + "\n")
			continue
		}
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-runes(c))
			if i == 0 {
				line.WriteString(c + pad)
			} else {
				line.WriteString(strings.Repeat(" ", sep) + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func runes(s string) int { return len([]rune(s)) }

// writeWarmup lists the cold-start figures of the points that had warm-up
// requests (excluded from the table above).
func writeWarmup(b *strings.Builder, s *metrics.Summary, bullet string) {
	first := true
	for i := range s.Points {
		p := &s.Points[i]
		w := p.Warmup
		if w == nil {
			continue
		}
		if first {
			b.WriteString("\nCold start (warm-up requests, excluded above):\n")
			first = false
		}
		firstTTFT := "-"
		if w.FirstTTFTMS != nil {
			firstTTFT = num(*w.FirstTTFTMS, 0) + " ms"
		}
		fmt.Fprintf(b, "%s%s: %d requests (%d failed), first TTFT %s, TTFT p50 %s ms, decode p50 %s tok/s\n",
			bullet, LoadLabel(p), w.Count, w.Failed, firstTTFT, dist(w.TTFT, "p50", 0), dist(w.DecodeTPSReq, "p50", 1))
	}
}

// isAboveTable tells the warnings said above the table from the others:
// the client's saturation and the simulator falling behind its clock.
func isAboveTable(w string) bool {
	return strings.HasPrefix(w, metrics.ClientLimitedPrefix) || strings.HasPrefix(w, metrics.SimBehindPrefix)
}

// writeAboveTable writes, under the header, that the client was near
// saturation or that the simulator fell behind: every figure below may be
// the host's limit, not the server's.
func writeAboveTable(b *strings.Builder, s *metrics.Summary, bullet string) {
	for _, w := range s.Warnings {
		if isAboveTable(w) {
			b.WriteString(bullet + "WARNING " + w + "\n\n")
		}
	}
}
