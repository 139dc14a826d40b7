package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/stats"
)

// prefixTitle heads the prefix-cache section of every format.
const prefixTitle = "Prefix cache (per request, the cached prompt tokens the server reported; a request without a count is a miss; " +
	"server: its own hit rate over the point, from its metrics):"

// prefixRows is the prefix-cache table (group headings, names, then a row
// per point), or nil when no point has a figure to show: no request's
// server reported a cached count, and the server's metrics show no hit.
func prefixRows(s *metrics.Summary) [][]string {
	show := false
	for i := range s.Points {
		if hr := serverHitRate(&s.Points[i]); s.Points[i].PrefixCache != nil || hr != nil && *hr > 0 {
			show = true
		}
	}
	if !show {
		return nil
	}
	rows := [][]string{
		{"", "client", "", "", "TTFT hit ms", "", "", "TTFT miss ms", "", "", "server"},
		{"load", "hit rate", "cached/prompt tok", "hits/requests", "p50", "p95", "p99", "p50", "p95", "p99", "hit rate"},
	}
	for i := range s.Points {
		p := &s.Points[i]
		row := []string{LoadLabel(p), "-", "-", "-"}
		var hit, miss stats.Dist
		if pc := p.PrefixCache; pc != nil {
			row[1] = num(100*pc.HitRate, 1) + "%"
			row[2] = fmt.Sprintf("%d/%d", pc.CachedTokens, pc.PromptTokens)
			row[3] = fmt.Sprintf("%d/%d", pc.Hits, pc.Requests)
			hit, miss = pc.TTFTHit, pc.TTFTMiss
		}
		for _, d := range []stats.Dist{hit, miss} {
			row = append(row, dist(d, "p50", 0), dist(d, "p95", 0), dist(d, "p99", 0))
		}
		srv := "-"
		if hr := serverHitRate(p); hr != nil {
			srv = num(100**hr, 1) + "%"
		}
		rows = append(rows, append(row, srv))
	}
	return rows
}

// serverHitRate is the server's own prefix-cache hit rate over the point.
func serverHitRate(p *metrics.PointSummary) *float64 {
	if t := p.Telemetry; t != nil && t.Server != nil {
		return t.Server.PrefixCacheHitRate
	}
	return nil
}

// writePrefixCache writes the prefix-cache section, if any.
func writePrefixCache(b *strings.Builder, s *metrics.Summary, markdown bool) {
	rows := prefixRows(s)
	if rows == nil {
		return
	}
	writeSection(b, prefixTitle, rows, markdown)
}

// prefixTable is the prefix-cache section as a table of the HTML page,
// named after the run when the page shows several; nil when there is none.
func prefixTable(r *HTMLRun, multi bool) *HTMLTable {
	rows := prefixRows(r.Summary)
	if rows == nil {
		return nil
	}
	t := &HTMLTable{Title: "Prefix cache", Notes: []string{prefixTitle}}
	if multi {
		t.Title += " · " + r.Name
	}
	group := ""
	for i, name := range rows[1] {
		if rows[0][i] != "" {
			group = rows[0][i]
		}
		t.Columns = append(t.Columns, strings.TrimSpace(group+" "+name))
	}
	t.Rows = rows[2:]
	return t
}
