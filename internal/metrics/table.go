package metrics

import (
	"math"
	"slices"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Metric is one row of the metric table: how a figure of a load point is
// named, in which unit and direction it is read, where summary.json holds
// it and how to read it from a PointSummary. Objectives, comparisons,
// reports and the history all iterate Table, so that adding a metric is
// adding a row (docs/METRICS.md defines each).
type Metric struct {
	// Name is the metric as objectives and comparisons name it ("ttft");
	// empty for a figure no objective can name. Aliases are other
	// spellings an objective accepts.
	Name    string
	Aliases []string
	// Field is the summary.json field read: a distribution's object, a
	// number, or a dotted path into one ("requests.errors.out_of_memory").
	Field string
	// Unit is the canonical unit: ms, tok/s, fraction or requests.
	Unit           string
	HigherIsBetter bool
	// Dist reads a per-request distribution; Value reads a metric that
	// is one number per load point, with how many requests back it (NaN
	// when nothing was measured). Exactly one is set.
	Dist  func(*PointSummary) stats.Dist
	Value func(*PointSummary) (float64, int)

	// What each consumer shows of the metric, where it differs by row.
	//
	// CSV: the distribution's statistics are columns of report's CSV, in
	// table order.
	CSV bool
	// Headline is the metric's place among the rows compare prints at
	// every load point (1 first); 0: not compared unless a gate names it.
	Headline int
	// History are the distribution's statistics the history database
	// keeps as columns of its points.
	History []string
	// Chart: the HTML report draws the metric on a chart of that name,
	// with an objective on it as a line.
	Chart bool
	// PerRun: the metric is a rate over a point's whole window, so
	// repeats are the mean of each run's own, not one pooled window.
	PerRun bool
}

// Distribution reports whether the metric has a distribution (and so a
// percentile) rather than one number per load point.
func (m *Metric) Distribution() bool { return m.Dist != nil }

// Table is every metric of a load point that something outside this
// package names, in the order CSV columns and objective errors list them.
var Table = []Metric{
	{Name: "ttft", Aliases: []string{"time_to_first_token", "ttft_ms"}, Field: "ttft_ms", Unit: "ms",
		Dist: func(p *PointSummary) stats.Dist { return p.TTFT }, CSV: true, Headline: 1, History: []string{"p50", "p95"}, Chart: true},
	{Field: "ttft_sched_ms", Unit: "ms", Dist: func(p *PointSummary) stats.Dist { return p.TTFTSched }, CSV: true},
	{Field: "ttfo_ms", Unit: "ms", Dist: func(p *PointSummary) stats.Dist { return p.TTFO }, CSV: true},
	{Name: "itl", Aliases: []string{"inter_token_latency", "itl_ms"}, Field: "itl_ms", Unit: "ms",
		Dist: func(p *PointSummary) stats.Dist { return p.ITL }, CSV: true, Headline: 2, History: []string{"p95"}, Chart: true},
	{Name: "tpot", Aliases: []string{"tpot_ms", "time_per_output_token"}, Field: "tpot_ms", Unit: "ms",
		Dist: func(p *PointSummary) stats.Dist { return p.TPOT }, CSV: true},
	{Name: "e2e", Aliases: []string{"e2e_ms", "latency", "end_to_end"}, Field: "e2e_ms", Unit: "ms",
		Dist: func(p *PointSummary) stats.Dist { return p.E2E }, CSV: true, Headline: 3, History: []string{"p95"}, Chart: true},
	{Field: "queue_ms", Unit: "ms", Dist: func(p *PointSummary) stats.Dist { return p.Queue }, CSV: true},
	{Name: "speed", Aliases: []string{"decode_speed", "decode_tps", "decode_tps_per_request", "tps_per_user", "per_user_speed"},
		Field: "decode_tps_per_request", Unit: "tok/s", HigherIsBetter: true,
		Dist: func(p *PointSummary) stats.Dist { return p.DecodeTPSReq }, CSV: true, Headline: 4, History: []string{"p50"}, Chart: true},
	{Field: "prefill_tps_per_request", Unit: "tok/s", HigherIsBetter: true,
		Dist: func(p *PointSummary) stats.Dist { return p.PrefillTPS }, CSV: true},
	{Name: "error_rate", Aliases: []string{"errors"}, Field: "error_rate", Unit: "fraction",
		Value: errorRate, Headline: 6},
	{Name: "throughput", Aliases: []string{"output_tps", "aggregate_throughput"}, Field: "output_tps", Unit: "tok/s", HigherIsBetter: true,
		Value: outputTPS, Headline: 5, Chart: true, PerRun: true},
	// The prefix cache (prefix.go): rows a run without cached-token
	// counts leaves empty, so that no table or column shows them.
	{Name: "prefix_hit_rate", Aliases: []string{"cache_hit_rate", "prefix_cache_hit_rate"}, Field: "prefix_cache.hit_rate",
		Unit: "fraction", HigherIsBetter: true, Value: prefixHitRate},
	{Name: "ttft_hit", Aliases: []string{"ttft_hit_ms"}, Field: "prefix_cache.ttft_hit_ms", Unit: "ms", Dist: ttftHit},
	{Name: "ttft_miss", Aliases: []string{"ttft_miss_ms"}, Field: "prefix_cache.ttft_miss_ms", Unit: "ms", Dist: ttftMiss},
	{Name: record.ClassOOM, Aliases: []string{"oom"}, Field: "requests.errors." + record.ClassOOM, Unit: "requests",
		Value: func(p *PointSummary) (float64, int) {
			return float64(p.Requests.Errors[record.ClassOOM]), p.Requests.Completed + p.Requests.Failed
		}},
}

// LookupMetric finds the row an objective names by its name or an alias.
func LookupMetric(name string) (*Metric, bool) {
	for i := range Table {
		if m := &Table[i]; name != "" && (m.Name == name || slices.Contains(m.Aliases, name)) {
			return m, true
		}
	}
	return nil, false
}

// errorRate is the share of measured requests that failed.
func errorRate(p *PointSummary) (float64, int) {
	n := p.Requests.Completed + p.Requests.Failed
	if n == 0 {
		return math.NaN(), 0
	}
	return p.ErrorRate, n
}

// outputTPS is the aggregate output throughput, backed by the requests
// that completed.
func outputTPS(p *PointSummary) (float64, int) {
	if p.Requests.Completed == 0 {
		return math.NaN(), 0
	}
	return p.OutputTPS, p.Requests.Completed
}
