package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/sweep"
)

// StartupLine says how a server started, in seconds from its process's
// start: "ready in 12.3 s (port 2.1 s, model listed 11.0 s, first token
// 12.2 s; the cold request's TTFT 1.2 s)".
func StartupLine(st sweep.Startup) string {
	return fmt.Sprintf("ready in %s s (port %s s, model listed %s s, first token %s s; the cold request's TTFT %s s)",
		secs(st.ReadyS), secs(st.PortOpenS), secs(st.ModelListedS), secs(st.FirstTokenS), secs(st.ColdTTFTS))
}

func secs(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// SweepJSON writes sweep.json's document.
func SweepJSON(w io.Writer, f *sweep.File) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// Sweep writes a sweep's table, one row per configuration, then the
// Pareto frontier and the recommendation.
func Sweep(w io.Writer, f *sweep.File) error { return writeSweep(w, f, false) }

// SweepMarkdown writes what Sweep writes, its tables in Markdown.
func SweepMarkdown(w io.Writer, f *sweep.File) error { return writeSweep(w, f, true) }

func writeSweep(w io.Writer, f *sweep.File, md bool) error {
	var b strings.Builder
	if md {
		fmt.Fprintf(&b, "\nSweep: %s\n\n", mdCode(f.Serve))
	} else {
		fmt.Fprintf(&b, "\nSweep: %s\n\n", f.Serve)
	}
	if f.StartupOnly {
		sweepTable(&b, sweepStartups(f), md)
	} else {
		sweepTable(&b, sweepConfigs(f), md)
		sweepFrontier(&b, f, md)
	}
	sweepPlans(&b, f, md)
	var failed []string
	for _, c := range f.Configs {
		if c.Error != nil {
			failed = append(failed, c.Name+": "+*c.Error)
		}
	}
	bullet := listItem(md)
	if len(failed) > 0 {
		b.WriteString("\nFailed (each with its server.log):\n" + bullet + strings.Join(failed, "\n"+bullet) + "\n")
	}
	switch {
	case f.Objective == "":
	case f.Recommended != "":
		fmt.Fprintf(&b, "\nRecommendation (objective %s): %s — %s\n", f.Objective, f.Recommended, f.Why)
	default:
		fmt.Fprintf(&b, "\nNo recommendation (objective %s): %s\n", f.Objective, f.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sweepTable writes rows, the first their heading: aligned for the
// terminal, or as a Markdown table.
func sweepTable(b *strings.Builder, rows [][]string, md bool) {
	if md {
		writeMarkdownTable(b, rows)
		return
	}
	writeAligned(b, rows)
}

// mdCode is s as a Markdown code span, fenced by one more backtick than
// the longest run of them inside it.
func mdCode(s string) string {
	fence, run := "`", 0
	for _, r := range s {
		if r != '`' {
			run = 0
			continue
		}
		if run++; run >= len(fence) {
			fence += "`"
		}
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func sweepConfigs(f *sweep.File) [][]string {
	rows := [][]string{{"config", "ready s", "first token s", "capacity", "saturation", "peak tok/s", "speed p50 @cap", "speed p95 @cap", "server RSS", "GPU mem", "objective"}}
	for _, c := range f.Configs {
		row := []string{c.Name, "-", "-", loadOrDash(c.Capacity), loadOrDash(c.Saturation), fnum(c.PeakOutputTPS, 1), "-", "-",
			bytesCell(c.PeakServerRSSBytes), bytesCell(c.PeakGPUMemoryBytes), orDash(c.Conclusion)}
		if c.Startup != nil {
			row[1], row[2] = secs(c.Startup.ReadyS), secs(c.Startup.FirstTokenS)
		}
		if d := c.DecodeAtCapacity; d != nil {
			row[6], row[7] = fnum(d.P50, 1), fnum(d.P95, 1)
		}
		if c.Error != nil {
			row[len(row)-1] = "FAILED"
		}
		rows = append(rows, row)
	}
	return rows
}

func sweepStartups(f *sweep.File) [][]string {
	rows := [][]string{{"config", "starts", "ready s min", "median", "max", "first token s min", "median", "max"}}
	for _, c := range f.Configs {
		row := []string{c.Name, "0", "-", "-", "-", "-", "-", "-"}
		if s := c.StartupSummary; s != nil {
			row[1] = strconv.Itoa(s.N)
			fillMinMedMax(row[2:5], s.ReadyS)
			fillMinMedMax(row[5:8], s.FirstTokenS)
		} else if c.Startup != nil {
			row[1] = "1"
			row[2], row[3], row[4] = secs(c.Startup.ReadyS), secs(c.Startup.ReadyS), secs(c.Startup.ReadyS)
			row[5], row[6], row[7] = secs(c.Startup.FirstTokenS), secs(c.Startup.FirstTokenS), secs(c.Startup.FirstTokenS)
		}
		rows = append(rows, row)
	}
	return rows
}

func fillMinMedMax(cells []string, m *sweep.MinMedMax) {
	if m == nil {
		return
	}
	cells[0], cells[1], cells[2] = secs(&m.Min), secs(&m.Median), secs(&m.Max)
}

func sweepFrontier(b *strings.Builder, f *sweep.File, md bool) {
	if len(f.Pareto) == 0 {
		return
	}
	x := "output tok/s"
	if f.Pareto[0].PerGPU {
		x = "output tok/s per GPU"
	}
	fmt.Fprintf(b, "\nPareto frontier (no other load point is both faster per user and higher in %s):\n\n", x)
	rows := [][]string{{"config", "load", x, "speed p50", "speed p95", "on"}}
	for _, p := range f.Pareto {
		rows = append(rows, []string{p.Config, p.Load.Text(record.LoadShort), strconv.FormatFloat(p.X, 'f', 1, 64),
			fnum(p.SpeedP50, 1), fnum(p.SpeedP95, 1), strings.Join(p.On, ", ")})
	}
	sweepTable(b, rows, md)
}

func loadOrDash(l *record.Load) string {
	if l == nil {
		return "-"
	}
	return l.Text(record.LoadShort)
}

func fnum(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

func bytesCell(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v/(1<<30), 'f', 2, 64) + " GiB"
}

// WriteSweepPage writes the sweep's report.html in its directory: the
// table of configurations, the frontier chart and table, then each
// configuration's run as the run pages draw them (those whose directory
// holds a run).
func WriteSweepPage(dir string, f *sweep.File) error {
	var b bytes.Buffer
	if err := SweepPage(&b, f); err != nil {
		return err
	}
	return rundir.WriteReport(dir, b.Bytes())
}

// SweepPage writes the page WriteSweepPage writes.
func SweepPage(w io.Writer, f *sweep.File) error {
	page := &HTMLPage{Title: "servebench sweep: " + f.Serve, Answer: SweepAnswer(f), Frontier: frontierOf(f)}
	var rows [][]string
	for _, c := range f.Configs {
		row := []string{c.Name, "-", "-", loadOrDash(c.Capacity), loadOrDash(c.Saturation), fnum(c.PeakOutputTPS, 1), bytesCell(c.PeakServerRSSBytes), bytesCell(c.PeakGPUMemoryBytes), "ok"}
		if c.Startup != nil {
			row[1], row[2] = secs(c.Startup.ReadyS), secs(c.Startup.FirstTokenS)
		}
		if c.Error != nil {
			row[8] = *c.Error
		}
		rows = append(rows, row)
	}
	var notes []string
	if f.Objective != "" {
		notes = append(notes, "objective "+f.Objective+": "+cmp.Or(f.Recommended, "no recommendation")+" — "+f.Why)
	}
	page.Tables = append(page.Tables, HTMLTable{Title: "Configurations", Notes: nonNil(notes),
		Columns: []string{"config", "ready s", "first token s", "capacity", "saturation", "peak tok/s", "server RSS", "GPU memory", "outcome"}, Rows: rows})
	if t := planHTMLTable(f); t != nil {
		page.Tables = append(page.Tables, *t)
	}
	for _, c := range f.Configs {
		if c.Error != nil || len(c.Points) == 0 || c.RunDir == "" {
			continue // "" would read standard input
		}
		r, err := runOf(c.RunDir, c.Name)
		if err != nil {
			continue // a run that cannot be read is its own page's business
		}
		page.Runs = append(page.Runs, *r)
	}
	return WriteHTML(w, page)
}

// SweepAnswer is the sweep page's first line: with an objective, the
// configuration recommended and why (or that none meets it); without, which
// configurations reach the frontier. Failed and inconclusive
// configurations qualify it.
func SweepAnswer(f *sweep.File) *HTMLAnswer {
	a := &HTMLAnswer{Tone: "same", Qualifiers: []string{}}
	ran, failed := 0, []string{}
	for _, c := range f.Configs {
		if c.Error != nil {
			failed = append(failed, c.Name+": "+*c.Error)
		} else {
			ran++
		}
	}
	switch {
	case ran == 0:
		a.Headline, a.Tone = fmt.Sprintf("Every configuration failed (%d).", len(f.Configs)), "worse"
	case f.Objective != "" && f.Recommended != "":
		a.Headline, a.Tone = "Recommended for objective "+f.Objective+": "+f.Recommended+" — "+f.Why, "better"
	case f.Objective != "" && len(f.Inconclusive) > 0:
		a.Headline, a.Tone = "No configuration meets objective "+f.Objective+" on valid evidence — "+f.Why, "inconclusive"
	case f.Objective != "":
		a.Headline, a.Tone = "No configuration meets objective "+f.Objective+" — "+f.Why, "worse"
	case f.StartupOnly:
		a.Headline = fmt.Sprintf("Start-up measured for %d of %d configurations.", ran, len(f.Configs))
	default:
		var on []string
		for _, p := range f.Pareto {
			if !slices.Contains(on, p.Config) {
				on = append(on, p.Config)
			}
		}
		a.Headline = fmt.Sprintf("%d of %d configurations measured; on the Pareto frontier of per-user speed against throughput: %s.",
			ran, len(f.Configs), cmp.Or(strings.Join(on, ", "), "none"))
	}
	if len(f.Inconclusive) > 0 {
		a.Qualifiers = append(a.Qualifiers, "INCONCLUSIVE evidence: "+strings.Join(f.Inconclusive, ", "))
	}
	for _, x := range failed {
		a.Qualifiers = append(a.Qualifiers, "FAILED "+x)
	}
	return a
}

// frontierOf is the frontier chart's data: every configuration's load
// points, and the frontier's, by percentile.
func frontierOf(f *sweep.File) *frontierData {
	if f.StartupOnly {
		return nil
	}
	d := &frontierData{XLabel: "output tok/s (aggregate)", Configs: []frontierConfig{}, Frontier: map[string][][2]float64{"p50": {}, "p95": {}}}
	if len(f.Pareto) > 0 && f.Pareto[0].PerGPU {
		d.XLabel = "output tok/s per GPU"
	}
	for _, c := range f.Configs {
		fc := frontierConfig{Name: c.Name, Points: []frontierPoint{}}
		for _, p := range c.Points {
			x := p.OutputTPS
			if d.XLabel != "output tok/s (aggregate)" && p.OutputTPSPerGPU != nil {
				x = *p.OutputTPSPerGPU
			}
			fc.Points = append(fc.Points, frontierPoint{X: x, P50: p.DecodeP50, P95: p.DecodeP95, Load: p.Load.Text(record.LoadShort)})
		}
		d.Configs = append(d.Configs, fc)
	}
	for _, p := range f.Pareto {
		for _, on := range p.On {
			y := p.SpeedP50
			if on == "p95" {
				y = p.SpeedP95
			}
			if y != nil {
				d.Frontier[on] = append(d.Frontier[on], [2]float64{p.X, *y})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d.Frontier)) {
		slices.SortFunc(d.Frontier[k], func(a, b [2]float64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(b[1], a[1])) })
	}
	return d
}

// runOf reads a configuration's run for the page as report reads a run
// directory (LoadRun), named after the configuration.
func runOf(dir, name string) (*HTMLRun, error) {
	r, _, err := LoadRun(dir, nil, rundir.Options{}, nil, false)
	if err != nil {
		return nil, err
	}
	r.Name = name
	return &r, nil
}

// frontierData is the sweep page's frontier chart: per-user speed
// against aggregate throughput, one series per configuration, the
// frontier drawn through its points.
type frontierData struct {
	XLabel   string                  `json:"x_label"`
	Configs  []frontierConfig        `json:"configs"`
	Frontier map[string][][2]float64 `json:"frontier"`
}

type frontierConfig struct {
	Name   string          `json:"name"`
	Points []frontierPoint `json:"points"`
}

type frontierPoint struct {
	X    float64  `json:"x"`
	P50  *float64 `json:"p50"`
	P95  *float64 `json:"p95"`
	Load string   `json:"load"`
}
