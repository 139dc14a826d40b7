package report

import (
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/telemetry"
)

// telemetryColumns are shown when some point has their figure: the
// server's peak KV-cache use and the busiest GPU's peak memory, the two
// that say whether memory is what a load runs out of.
var telemetryColumns = []struct {
	col column
	get func(*telemetry.Point) *float64
}{
	{column{"KV cache", "peak %", func(p *metrics.PointSummary) string { return peakCell(p.Telemetry.PeakKVCache(), 100, 1) }},
		(*telemetry.Point).PeakKVCache},
	{column{"VRAM GiB", "peak", func(p *metrics.PointSummary) string { return peakCell(p.Telemetry.PeakVRAMBytes(), 1.0/(1<<30), 1) }},
		(*telemetry.Point).PeakVRAMBytes},
}

// prefillColumn is the server's own prefill throughput per request,
// shown when some point has it; prefillNote says where it came from.
var prefillColumn = column{"prefill tok/s", "server", func(p *metrics.PointSummary) string {
	v, _, ok := p.ServerPrefillTPS()
	if !ok {
		return "-"
	}
	return num(v, 0)
}}

// prefillSources are the distinct sources of the points' server prefill
// figures, in point order; nil when no point has one.
func prefillSources(s *metrics.Summary) []string {
	var out []string
	for i := range s.Points {
		if _, src, ok := s.Points[i].ServerPrefillTPS(); ok && !slices.Contains(out, src) {
			out = append(out, src)
		}
	}
	return out
}

// prefillNote is the line under the table that defines its two prefill
// columns, or "" when it has only the client's.
func prefillNote(s *metrics.Summary) string {
	src := prefillSources(s)
	if src == nil {
		return ""
	}
	return "prompt/TTFT tok/s: prompt tokens ÷ TTFT, queueing and request overhead included; prefill tok/s server: from " +
		strings.Join(src, "; ") + "\n"
}

// tableColumns are the table's columns for s: the fixed ones, then the
// telemetry ones some point knows.
func tableColumns(s *metrics.Summary) []column {
	cols := columns
	if prefillSources(s) != nil {
		at := slices.IndexFunc(cols, func(c column) bool { return c.group == "prompt/TTFT tok/s" }) + 1
		cols = slices.Insert(cols[:len(cols):len(cols)], at, prefillColumn)
	}
	for _, tc := range telemetryColumns {
		for i := range s.Points {
			if tc.get(s.Points[i].Telemetry) != nil {
				cols = append(cols[:len(cols):len(cols)], tc.col)
				break
			}
		}
	}
	return cols
}

func peakCell(v *float64, scale float64, prec int) string {
	if v == nil {
		return "-"
	}
	return num(*v*scale, prec)
}

func ptrNum(v *float64, scale float64, prec int) string {
	if v == nil {
		return ""
	}
	return num(*v*scale, prec)
}

func meanMax(s *telemetry.ServerPoint, get func(*telemetry.ServerPoint) *telemetry.MeanMax, scale float64, prec int) string {
	if s == nil || get(s) == nil {
		return ""
	}
	m := get(s)
	return num(m.Mean*scale, prec) + "/" + num(m.Max*scale, prec)
}

func serverF(t *telemetry.Point, get func(*telemetry.ServerPoint) *float64) *float64 {
	if t.Server == nil {
		return nil
	}
	return get(t.Server)
}

func hostF(t *telemetry.Point, get func(*telemetry.HostPoint) *float64, scale float64, prec int) string {
	if t.Host == nil {
		return ""
	}
	return ptrNum(get(t.Host), scale, prec)
}

// quantile is a server percentile in ms, a p50 with its bucket.
func quantile(t *telemetry.Point, ttft bool, which string) string {
	q := serverQuantiles(t, ttft)
	if q == nil {
		return ""
	}
	cell, _ := quantileCell(q, which)
	return cell
}

// serverQuantiles is the point's server TTFT (or queue) histogram
// percentiles; nil when it has none.
func serverQuantiles(t *telemetry.Point, ttft bool) *telemetry.Quantiles {
	if t == nil || t.Server == nil {
		return nil
	}
	q := t.Server.QueueMS
	if ttft {
		q = t.Server.TTFTMS
	}
	if q == nil || q.Count == 0 {
		return nil
	}
	return q
}

// wideBucket is how wide (upper bound over lower) a histogram bucket may
// be for a percentile inside it to be printed as a value: past it, where
// in the bucket the percentile lies is the interpolation's guess, not the
// server's measurement, and the bucket is printed instead. vLLM's TTFT
// buckets 40–60–80–100 ms and 500–750–1000 ms stay values; 100–250 ms,
// 1–2.5 s and its queue-time buckets 0–300–500 ms print as buckets.
const wideBucket = 1.5

// quantileCell is a server percentile as printed: its value, or the
// bucket holding it, [lo–hi] ([≥lo] for the last, unbounded one), when
// that is over wideBucket wide; low is the least the cell claims.
func quantileCell(q *telemetry.Quantiles, which string) (cell string, low float64) {
	v := map[string]float64{"p50": q.P50, "p90": q.P90, "p99": q.P99}[which]
	bk := q.Bucket[which]
	switch {
	case len(bk) == 1:
		return "[≥" + num(bk[0], 0) + "]", bk[0]
	case len(bk) == 2 && (bk[0] <= 0 || bk[1] > wideBucket*bk[0]):
		return "[" + num(bk[0], 0) + "–" + num(bk[1], 0) + "]", bk[0]
	}
	return num(v, 0), v
}

// clientSlack is how far above the client's TTFT a server figure may lie
// before it is marked: the server's TTFT and queue time of a request are
// parts of the TTFT its client measured, but a window's histogram may also
// hold a few requests the client's percentiles do not (at its edges).
const clientSlack = 1.1

// serverQuantile is the cell of a server percentile beside the client's
// measurement of the same point: marked "!" when what it claims (its
// value, or its bucket's lower bound) exceeds the client's TTFT at the
// same percentile, which bounds both the server's TTFT and its queue
// time.
func serverQuantile(p *metrics.PointSummary, ttft bool, which string) string {
	q := serverQuantiles(p.Telemetry, ttft)
	if q == nil {
		return ""
	}
	cell, low := quantileCell(q, which)
	if c, ok := p.TTFT.Get(which); ok && low > clientSlack*c {
		cell += " !"
	}
	return cell
}

// gpuMax is the largest of a figure over the GPUs that have it.
func gpuMax(t *telemetry.Point, get func(telemetry.GPUPoint) *float64) string {
	var m *float64
	for _, g := range t.GPUs {
		if v := get(g); v != nil && (m == nil || *v > *m) {
			m = v
		}
	}
	return ptrNum(m, 1, 0)
}

// gpuSum is a figure summed over the GPUs, when each has it.
func gpuSum(t *telemetry.Point, get func(telemetry.GPUPoint) *float64) string {
	var sum float64
	for _, g := range t.GPUs {
		v := get(g)
		if v == nil {
			return ""
		}
		sum += *v
	}
	if len(t.GPUs) == 0 {
		return ""
	}
	return num(sum, 0)
}

// gpuMean is a figure averaged over the GPUs that have it.
func gpuMean(t *telemetry.Point, get func(telemetry.GPUPoint) *float64, scale float64) string {
	var sum float64
	n := 0
	for _, g := range t.GPUs {
		if v := get(g); v != nil {
			sum, n = sum+*v, n+1
		}
	}
	if n == 0 {
		return ""
	}
	return num(sum/float64(n)*scale, 0)
}

// eventsCell counts a point's events by kind: "2 scrape_failed, 1 gap".
func eventsCell(ev map[string]int) string {
	if len(ev) == 0 {
		return ""
	}
	return metrics.ErrorCounts(ev)
}
