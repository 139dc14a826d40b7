package report

import (
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/slo"
)

// The HTML report is one file that opens offline: the chart library
// (uPlot, assets/uplot: its version and licence beside it, refreshed by
// scripts/refresh-uplot.sh), the page's script and style and the data are
// all inside it. The page is drawn by its script from one JSON document;
// nothing in it is fetched.

//go:embed assets/uplot/uPlot.iife.min.js
var uplotJS string

//go:embed assets/uplot/uPlot.min.css
var uplotCSS string

//go:embed assets/report.js
var pageJS string

//go:embed assets/report.css
var pageCSS string

// HTMLRun is one run on a page: a candidate, when a page shows several.
type HTMLRun struct {
	// Name tells the run apart from the others on the page (its directory).
	Name    string
	Summary *metrics.Summary
	// Objective and Verdict, when the run was judged: the verdict is
	// stated first and the objective's SLOs are drawn on their charts.
	Objective *slo.Objective
	Verdict   *slo.Verdict
	// Curves are the run's distributions and timeline (metrics.Curves fed
	// the same records as the summary); nil draws neither.
	Curves *metrics.Curves
}

// HTMLTable is a table a caller adds to a page, shown after the verdicts
// (compare's differences, for one). Cells are text.
type HTMLTable struct {
	Title   string     `json:"title"`
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
	Notes   []string   `json:"notes"`
}

// HTMLAnswer is what a page states first, above everything else: one
// sentence and the statements that qualify it (compare's headline). A page
// without one states its runs' verdicts, or their key figures, and their
// warnings first.
type HTMLAnswer struct {
	Headline string `json:"headline"`
	// Tone colours the headline: "worse", "better", "same" or
	// "inconclusive".
	Tone       string   `json:"tone"`
	Qualifiers []string `json:"qualifiers"`
}

// HTMLPage is a whole page: its answer, its runs side by side, overlaid on
// the same charts where they share a workload, and any tables.
type HTMLPage struct {
	Title  string
	Answer *HTMLAnswer
	Runs   []HTMLRun
	Tables []HTMLTable
	// Frontier, on a sweep's page, is its Pareto chart (nil: none).
	Frontier *frontierData
}

// WriteHTML writes the page.
func WriteHTML(w io.Writer, p *HTMLPage) error {
	data, err := json.Marshal(buildPage(p)) // escapes <, > and &: no "</script>" inside
	if err != nil {
		return err
	}
	var b strings.Builder
	b.Grow(len(uplotJS) + len(pageJS) + len(data) + 8<<10)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<title>" + html.EscapeString(p.Title) + "</title>\n")
	b.WriteString("<style>\n" + uplotCSS + "\n" + pageCSS + "\n</style>\n</head>\n<body>\n")
	b.WriteString("<main id=\"report\"><h1>" + html.EscapeString(p.Title) + "</h1></main>\n")
	b.WriteString("<script type=\"application/json\" id=\"sb-data\">")
	b.Write(data)
	b.WriteString("</script>\n<script>\n" + uplotJS + "\n</script>\n<script>\n" + pageJS + "\n</script>\n</body>\n</html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// PageTitle names a run's page after its target and model.
func PageTitle(s *metrics.Summary) string {
	if s.Run == nil {
		return "servebench report"
	}
	return "servebench · " + targetName(s.Run) + " · " + orDash(s.Run.Target.Model)
}
