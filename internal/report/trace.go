package report

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// traceText names a replayed trace in the header: its file, format and
// window, and the mean lengths sent.
func traceText(s *metrics.Summary) string {
	t := s.Run.Trace
	out := fmt.Sprintf("trace %s (%s, %d requests, ×%s)", filepath.Base(t.Path), t.Format, t.Requests, strconv.FormatFloat(t.Speed, 'g', -1, 64))
	if in, o, ok := measuredLengths(s.Points); ok {
		out += fmt.Sprintf(" · prompt %s tok · output %s tok (means sent)", num(in, 0), num(o, 0))
	}
	return out
}

// sparkBars draw a histogram in one line of text, lowest to highest.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// spark draws xs scaled to top (the largest of both series drawn, so that
// the trace's line and the sent line compare); a zero is a space.
func spark(xs []float64, top float64) string {
	var b strings.Builder
	for _, x := range xs {
		switch {
		case x <= 0 || top <= 0:
			b.WriteRune(' ')
		default:
			k := int(x / top * float64(len(sparkBars)-1))
			b.WriteRune(sparkBars[min(max(k, 0), len(sparkBars)-1)])
		}
	}
	return b.String()
}

// writeTrace writes a replayed trace's shape beside what the point
// achieved: arrivals over time, lengths, the reuse it implies, and how
// closely the client kept its schedule.
func writeTrace(b *strings.Builder, s *metrics.Summary) {
	if s.Run == nil || s.Run.Trace == nil {
		return
	}
	t := s.Run.Trace
	fmt.Fprintf(b, "\nTrace %s (%s): %d requests over %s s, replayed at ×%s",
		filepath.Base(t.Path), t.Format, t.Requests, num(t.SpanS, 1), strconv.FormatFloat(t.Speed, 'g', -1, 64))
	if t.Skipped > 0 {
		fmt.Fprintf(b, "; %d rows with a zero length left out (the first at line %d)", t.Skipped, t.SkippedFirstLine)
	}
	b.WriteString("\n")
	if t.Reuse != nil {
		fmt.Fprintf(b, "  reuse: %s%% of prompt tokens are in blocks of %d an earlier request had (what a large enough prefix cache could skip)\n",
			num(100**t.Reuse, 1), t.BlockSize)
	}
	if len(t.Labels) > 0 {
		b.WriteString("  labels: " + labelCounts(t.Labels) + "\n")
	}
	for i := range s.Points {
		if len(s.Points) > 1 {
			b.WriteString("  " + tracePointTitle(t, &s.Points[i]) + ":\n")
		}
		writeTracePoint(b, t, &s.Points[i])
	}
}

// tracePointTitle names one of several points of a judged replay: its
// load, and how many times faster than the replay it sent the trace.
func tracePointTitle(t *record.Trace, p *metrics.PointSummary) string {
	k := p.Trace.Factor()
	return fmt.Sprintf("%s, ×%s the trace's rate (replayed at ×%s)", LoadLabel(p),
		strconv.FormatFloat(k, 'g', 3, 64), strconv.FormatFloat(k*t.Speed, 'g', 3, 64))
}

// labelCounts lists a trace's label counts, most frequent first.
func labelCounts(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func writeTracePoint(b *strings.Builder, t *record.Trace, p *metrics.PointSummary) {
	rows := [][]string{{"  ", "", "trace", "sent"},
		{"  ", "arrivals/s (mean)", num(t.MeanRate*p.Trace.Factor(), 2), num(p.AchievedRate, 2)},
		lengthRow("prompt tok p50/p99", t.PromptTokens, p.PromptTokens),
		lengthRow("output tok p50/p99", t.OutputTokens, p.OutputTokens)}
	if p.Trace != nil {
		rows = append(rows, []string{"  ", "sent − scheduled ms p50/p99", "", dist(p.Trace.ScheduleErrorMS, "p50", 1) + "/" + dist(p.Trace.ScheduleErrorMS, "p99", 1)},
			[]string{"  ", "replayed", "", num(100*p.Trace.Replayed, 1) + "%"})
	}
	writeAligned(b, rows)
	if d := dropped(p); d != "" {
		b.WriteString("  " + d + "\n")
	}
	tr, sent := metrics.TraceArrivalsPerSecond(t, p.Trace)
	top := 0.0
	for i := range tr {
		top = max(top, tr[i], sent[i])
	}
	bin := num(t.BinS, 0)
	if k := p.Trace.Factor(); k != 1 {
		bin = strconv.FormatFloat(t.BinS/k, 'g', 3, 64) // the trace's bins, sent k times faster
	}
	fmt.Fprintf(b, "  arrivals per %s s (peak %s/s): trace |%s|\n", bin, num(top, 1), spark(tr, top))
	if p.Trace != nil {
		fmt.Fprintf(b, "  %s sent  |%s|\n", strings.Repeat(" ", runes(fmt.Sprintf("arrivals per %s s (peak %s/s):", bin, num(top, 1)))), spark(sent, top))
	}
}

func dropped(p *metrics.PointSummary) string {
	if p.Client == nil || p.Client.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("%d arrivals dropped under --max-concurrency", p.Client.Dropped)
}

func lengthRow(name string, trace, sent stats.Dist) []string {
	return []string{"  ", name, dist(trace, "p50", 0) + "/" + dist(trace, "p99", 0), dist(sent, "p50", 0) + "/" + dist(sent, "p99", 0)}
}

// traceData is a replayed trace on the HTML page: its facts beside what
// was achieved, and its arrivals per second against the sends.
type traceData struct {
	Title string     `json:"title"`
	Rows  [][]string `json:"rows"`
	T     []float64  `json:"t_s"`
	Trace []float64  `json:"trace"`
	Sent  []float64  `json:"sent"`
}

func buildTrace(s *metrics.Summary) *traceData {
	if s.Run == nil || s.Run.Trace == nil || len(s.Points) == 0 {
		return nil
	}
	t, p := s.Run.Trace, &s.Points[0]
	d := &traceData{Title: fmt.Sprintf("Trace %s (%s, ×%s)", filepath.Base(t.Path), t.Format, strconv.FormatFloat(t.Speed, 'g', -1, 64)),
		Rows: [][]string{{"", "trace", "sent"},
			{"requests", strconv.Itoa(t.Requests), strconv.Itoa(p.Requests.Completed + p.Requests.Failed + p.Requests.Cancelled)},
			{"arrivals/s (mean)", num(t.MeanRate, 2), num(p.AchievedRate, 2)},
			lengthRow("prompt tok p50/p99", t.PromptTokens, p.PromptTokens)[1:],
			lengthRow("output tok p50/p99", t.OutputTokens, p.OutputTokens)[1:]}}
	if t.Reuse != nil {
		d.Rows = append(d.Rows, []string{"reuse (prompt tokens in blocks seen before)", num(100**t.Reuse, 1) + "%", ""})
	}
	if len(t.Labels) > 0 {
		d.Rows = append(d.Rows, []string{"labels", labelCounts(t.Labels), ""})
	}
	if p.Trace != nil {
		d.Rows = append(d.Rows, []string{"sent − scheduled ms p50/p99", "", dist(p.Trace.ScheduleErrorMS, "p50", 1) + "/" + dist(p.Trace.ScheduleErrorMS, "p99", 1)})
	}
	d.Trace, d.Sent = metrics.TraceArrivalsPerSecond(t, p.Trace)
	d.T = make([]float64, len(d.Trace))
	for i := range d.T {
		d.T[i] = float64(i) * t.BinS
	}
	return d
}
