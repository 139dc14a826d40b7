package slo

import (
	"math"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// kind is what a metric measures, which fixes its unit and which way is
// better.
type kind int

const (
	latency    kind = iota // ms; lower is better
	speed                  // tok/s per request; higher is better
	throughput             // tok/s aggregate; higher is better
	fraction               // error rate; lower is better
	count                  // requests; lower is better
)

// Canonical units of each kind.
var units = map[kind]string{latency: "ms", speed: "tok/s", throughput: "tok/s", fraction: "fraction", count: "requests"}

// higherIsBetter reports the direction of a kind.
func (k kind) higherIsBetter() bool { return k == speed || k == throughput }

// distribution reports whether the metric has a distribution (and so a
// percentile) rather than one number per load point.
func (k kind) distribution() bool { return k == latency || k == speed }

// The canonical names of the metrics an SLO can name.
const (
	metricTTFT       = "ttft"
	metricITL        = "itl"
	metricTPOT       = "tpot"
	metricE2E        = "e2e"
	metricSpeed      = "speed"
	metricErrorRate  = "error_rate"
	metricThroughput = "throughput"
	metricOOM        = record.ClassOOM
)

// metricDef describes one metric an SLO can name: how it is written, what
// it measures, and where its value comes from at each level.
type metricDef struct {
	name    string
	aliases []string
	kind    kind
	field   string // the summary.json field read
	// dist is the summary distribution of a per-request metric (nil for
	// a metric that is one number per load point).
	dist func(*metrics.PointSummary) stats.Dist
	// point is a one-number metric's value at a load point and how many
	// requests back it; NaN when nothing was measured.
	point func(*metrics.PointSummary) (float64, int)
	// judge is the value each request is held to for goodput; NaN where
	// the request has none (it is then not judged on this metric). Nil
	// for metrics that do not judge single requests.
	judge func(reqVals) float64
	// samples is what one request adds to the metric's distribution, for
	// bootstrap intervals across repeats; nil when there are none.
	samples func(reqVals) []float64
}

// metricDefs are the metrics SLOs can name (docs/METRICS.md, Objectives).
var metricDefs = []metricDef{
	{name: metricTTFT, aliases: []string{"time_to_first_token", "ttft_ms"}, kind: latency, field: "ttft_ms",
		dist:  func(p *metrics.PointSummary) stats.Dist { return p.TTFT },
		judge: func(v reqVals) float64 { return v.ttft }, samples: func(v reqVals) []float64 { return one(v.ttft) }},
	// A request is judged on the mean of its own inter-token gaps: the
	// tokens after its first chunk over the time after it.
	{name: metricITL, aliases: []string{"inter_token_latency", "itl_ms"}, kind: latency, field: "itl_ms",
		dist:  func(p *metrics.PointSummary) stats.Dist { return p.ITL },
		judge: func(v reqVals) float64 { return meanOr(v.itl, math.NaN()) }, samples: func(v reqVals) []float64 { return v.itl }},
	{name: metricTPOT, aliases: []string{"tpot_ms", "time_per_output_token"}, kind: latency, field: "tpot_ms",
		dist:  func(p *metrics.PointSummary) stats.Dist { return p.TPOT },
		judge: func(v reqVals) float64 { return v.tpot }, samples: func(v reqVals) []float64 { return one(v.tpot) }},
	{name: metricE2E, aliases: []string{"e2e_ms", "latency", "end_to_end"}, kind: latency, field: "e2e_ms",
		dist:  func(p *metrics.PointSummary) stats.Dist { return p.E2E },
		judge: func(v reqVals) float64 { return v.e2e }, samples: func(v reqVals) []float64 {
			if v.failed {
				return nil
			}
			return one(v.e2e)
		}},
	{name: metricSpeed, aliases: []string{"decode_speed", "decode_tps", "decode_tps_per_request", "tps_per_user", "per_user_speed"},
		kind: speed, field: "decode_tps_per_request",
		dist:  func(p *metrics.PointSummary) stats.Dist { return p.DecodeTPSReq },
		judge: func(v reqVals) float64 { return v.spd }, samples: func(v reqVals) []float64 { return one(v.spd) }},
	// The error rate is the mean of each request's 0 (completed) or 1
	// (failed), which is what its interval resamples.
	{name: metricErrorRate, aliases: []string{"errors"}, kind: fraction, field: "error_rate",
		point: func(p *metrics.PointSummary) (float64, int) {
			n := p.Requests.Completed + p.Requests.Failed
			if n == 0 {
				return math.NaN(), 0
			}
			return p.ErrorRate, n
		},
		samples: func(v reqVals) []float64 {
			if v.failed {
				return []float64{1}
			}
			return []float64{0}
		}},
	{name: metricThroughput, aliases: []string{"output_tps", "aggregate_throughput"}, kind: throughput, field: "output_tps",
		point: func(p *metrics.PointSummary) (float64, int) {
			if p.Requests.Completed == 0 {
				return math.NaN(), 0
			}
			return p.OutputTPS, p.Requests.Completed
		}},
	{name: metricOOM, aliases: []string{"oom"}, kind: count, field: "requests.errors." + record.ClassOOM,
		point: func(p *metrics.PointSummary) (float64, int) {
			return float64(p.Requests.Errors[record.ClassOOM]), p.Requests.Completed + p.Requests.Failed
		}},
}

// one is a single value as a sample, none for NaN.
func one(x float64) []float64 {
	if math.IsNaN(x) {
		return nil
	}
	return []float64{x}
}

func lookupMetric(name string) (*metricDef, bool) {
	for i := range metricDefs {
		m := &metricDefs[i]
		if m.name == name {
			return m, true
		}
		for _, a := range m.aliases {
			if a == name {
				return m, true
			}
		}
	}
	return nil, false
}

func metricNames() string {
	names := make([]string, len(metricDefs))
	for i, m := range metricDefs {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

// meanOr is the mean of xs, or none when xs is empty.
func meanOr(xs []float64, none float64) float64 {
	if len(xs) == 0 {
		return none
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
