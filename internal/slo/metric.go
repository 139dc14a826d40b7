package slo

import (
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// kind is what a metric measures, which fixes how an objective writes its
// value and which percentiles it takes.
type kind int

const (
	latency    kind = iota // ms; lower is better
	speed                  // tok/s per request; higher is better
	throughput             // tok/s aggregate; higher is better
	fraction               // error rate; lower is better
	count                  // requests; lower is better
)

// kindOf reads a metric's kind from its unit and whether it has a
// distribution.
func kindOf(m *metrics.Metric) kind {
	switch {
	case m.Unit == "ms":
		return latency
	case m.Unit == "tok/s" && m.Distribution():
		return speed
	case m.Unit == "tok/s":
		return throughput
	case m.Unit == "fraction":
		return fraction
	}
	return count
}

// The canonical names of the metrics slo itself names.
const (
	metricTTFT       = "ttft"
	metricITL        = "itl"
	metricTPOT       = "tpot"
	metricE2E        = "e2e"
	metricSpeed      = "speed"
	metricErrorRate  = "error_rate"
	metricThroughput = "throughput"
	metricOOM        = record.ClassOOM
	metricTTFTHit    = "ttft_hit"
	metricTTFTMiss   = "ttft_miss"
)

// metricDef is a metric an SLO can name (a named row of metrics.Table)
// with what slo adds to it: its kind, and how each request is judged and
// resampled.
type metricDef struct {
	*metrics.Metric
	kind kind
	perRequest
}

// perRequest is what one request gives a metric.
type perRequest struct {
	// judge is the value each request is held to for goodput; NaN where
	// the request has none (it is then not judged on this metric). Nil
	// for metrics that do not judge single requests.
	judge func(reqVals) float64
	// samples is what one request adds to the metric's distribution, for
	// bootstrap intervals across repeats; nil when there are none.
	samples func(reqVals) []float64
}

// requestValues are the per-request values of the metrics that have them,
// by name; every metric with a distribution needs an entry (metric_test).
var requestValues = map[string]perRequest{
	metricTTFT: {judge: func(v reqVals) float64 { return v.ttft }, samples: func(v reqVals) []float64 { return one(v.ttft) }},
	// A request is judged on the mean of its own inter-token gaps: the
	// tokens after its first chunk over the time after it.
	metricITL:  {judge: func(v reqVals) float64 { return meanOr(v.itl, math.NaN()) }, samples: func(v reqVals) []float64 { return v.itl }},
	metricTPOT: {judge: func(v reqVals) float64 { return v.tpot }, samples: func(v reqVals) []float64 { return one(v.tpot) }},
	metricE2E: {judge: func(v reqVals) float64 { return v.e2e }, samples: func(v reqVals) []float64 {
		if v.failed {
			return nil
		}
		return one(v.e2e)
	}},
	metricSpeed: {judge: func(v reqVals) float64 { return v.spd }, samples: func(v reqVals) []float64 { return one(v.spd) }},
	// TTFT by prefix-cache hit and miss: a request is judged on the one
	// its server's cached count puts it in (no count is a miss).
	metricTTFTHit:  {judge: func(v reqVals) float64 { return ifHit(v, v.hit) }, samples: func(v reqVals) []float64 { return one(ifHit(v, v.hit)) }},
	metricTTFTMiss: {judge: func(v reqVals) float64 { return ifHit(v, !v.hit) }, samples: func(v reqVals) []float64 { return one(ifHit(v, !v.hit)) }},
	// The error rate is the mean of each request's 0 (completed) or 1
	// (failed), which is what its interval resamples.
	metricErrorRate: {samples: func(v reqVals) []float64 {
		if v.failed {
			return []float64{1}
		}
		return []float64{0}
	}},
}

// metricDefs are the metrics SLOs can name (docs/METRICS.md, Objectives),
// in the table's order.
var metricDefs = func() []metricDef {
	var defs []metricDef
	for i := range metrics.Table {
		if m := &metrics.Table[i]; m.Name != "" {
			defs = append(defs, metricDef{Metric: m, kind: kindOf(m), perRequest: requestValues[m.Name]})
		}
	}
	return defs
}()

// ifHit is the request's TTFT when in, NaN (not judged) otherwise.
func ifHit(v reqVals, in bool) float64 {
	if !in {
		return math.NaN()
	}
	return v.ttft
}

// one is a single value as a sample, none for NaN.
func one(x float64) []float64 {
	if math.IsNaN(x) {
		return nil
	}
	return []float64{x}
}

// lookupMetric is the definition of the metric a name or alias names.
func lookupMetric(name string) (*metricDef, bool) {
	m, ok := metrics.LookupMetric(name)
	if !ok {
		return nil, false
	}
	i := slices.IndexFunc(metricDefs, func(d metricDef) bool { return d.Metric == m })
	return &metricDefs[i], true
}

func metricNames() string {
	names := make([]string, len(metricDefs))
	for i, m := range metricDefs {
		names[i] = m.Name
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
