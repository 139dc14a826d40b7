package slo

import (
	"cmp"
	"math"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// PointVerdict is the objective judged at one load. JSON names are part
// of summary.json (docs/OUTPUT.md, Objective and verdict).
type PointVerdict struct {
	Load record.Load `json:"load"`
	// Points are the summary points pooled into this load (repeats).
	Points []int `json:"points"`
	// Requests counts measured requests (completed + failed); Good those
	// that met every per-request target.
	Requests   int      `json:"requests"`
	Good       int      `json:"good_requests"`
	Goodput    float64  `json:"goodput_rps"`
	Attainment *float64 `json:"attainment"`
	Checks     []Check  `json:"slos"`
	Pass       bool     `json:"pass"`
	Failed     []string `json:"failed"`
	// Shortfalls say how each failed SLO missed: "ttft p95 160ms > 100ms".
	Shortfalls []string `json:"shortfalls"`
	// Overloaded says why the load was stopped early, when it was.
	Overloaded string `json:"overloaded,omitempty"`
	// Failing says why the server failed at this load for reasons no load
	// explains (connect, 4xx, unreadable answers; record.KindFailing):
	// such a load is never called overloaded.
	Failing string `json:"failing,omitempty"`
	// NotHeld says why the load was not held (docs/METRICS.md, Achieved
	// load): its result, pass or fail, is not capacity evidence.
	NotHeld string `json:"not_held,omitempty"`
	// AllFailed is true when every measured request at this load failed.
	AllFailed bool `json:"all_failed"`
	// Validity says whether the evidence carries this load's result
	// (docs/METRICS.md, "Validity"): its points' reasons that bear on any
	// figure (the simulator behind, the client saturated, a server event),
	// and, when the load passes, those that bear on a pass (the load not
	// held, a percentile judged on too few samples). An invalid load is
	// INCONCLUSIVE, never capacity or saturation evidence.
	Validity metrics.Validity `json:"validity"`
	// What saturation is judged on: aggregate output tokens/s, the mean
	// E2E, and the speed 95% of requests reached (decode p5).
	OutputTPS float64  `json:"output_tps"`
	E2EMeanMS *float64 `json:"e2e_mean_ms"`
	SpeedP5   *float64 `json:"decode_tps_per_request_p5"`
}

// Check is one SLO judged at one load.
type Check struct {
	SLO    string `json:"slo"`
	Metric string `json:"metric"`
	// Stat and Field say which number was compared: Field's Stat.
	Stat   string  `json:"stat,omitempty"`
	Field  string  `json:"field"`
	Op     string  `json:"op"`
	Target float64 `json:"target"`
	Unit   string  `json:"unit"`
	// Measured is null when nothing was measured (no successful request).
	Measured *float64 `json:"measured"`
	// Margin is the headroom, in Unit: positive when the SLO holds.
	// MarginFraction is Margin / Target (null for a zero target).
	Margin         *float64 `json:"margin"`
	MarginFraction *float64 `json:"margin_fraction"`
	Pass           bool     `json:"pass"`
	// Samples is how many values back Measured.
	Samples int `json:"samples"`
	// CI and Certainty come with --repeat: the interval of Measured and
	// whether it lies wholly on the passing side ("pass"), wholly on the
	// failing side ("fail"), or straddles the target ("uncertain").
	CI        *Interval `json:"ci,omitempty"`
	Certainty string    `json:"certainty,omitempty"`

	slo SLO
}

// Interval is a confidence interval.
type Interval struct {
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Level float64 `json:"level"`
}

// SLOValue returns the SLO a check judged (for formatting).
func (c Check) SLOValue() SLO { return c.slo }

// check compares one SLO with a load's pooled summary.
func check(s SLO, pt *metrics.PointSummary) Check {
	c := Check{SLO: s.Expr, Metric: s.Metric, Stat: s.Stat, Field: s.Field, Op: s.Op,
		Target: s.Value, Unit: s.Unit, slo: s}
	v, n := measure(s, pt)
	c.Samples = n
	if math.IsNaN(v) {
		return c
	}
	c.Measured = &v
	m := s.Margin(v)
	c.Margin = &m
	if s.Value != 0 {
		f := m / s.Value
		c.MarginFraction = &f
	}
	c.Pass = s.Holds(v)
	return c
}

// measure reads the SLO's statistic from a summary point.
func measure(s SLO, pt *metrics.PointSummary) (float64, int) {
	if s.def.Dist == nil {
		return s.def.Value(pt)
	}
	d := s.def.Dist(pt)
	v, ok := d.Get(s.Stat)
	if !ok {
		return math.NaN(), d.Count
	}
	return v, d.Count
}

// interval adds a bootstrap confidence interval over the level's runs.
func (c *Check) interval(s SLO, lv *level, idx []int, opt Options) {
	stat, ok := statFunc(s)
	if !ok || c.Measured == nil {
		return
	}
	groups := lv.groups(s.def, idx)
	level := cmp.Or(opt.Confidence, stats.DefaultConfidence)
	iters := cmp.Or(opt.Iterations, stats.DefaultBootstrapIterations)
	lo, hi, ok := stats.BootstrapInterval(groups, stat, level, iters, opt.Seed)
	if !ok {
		return
	}
	c.CI = &Interval{Low: lo, High: hi, Level: level}
	switch passLo, passHi := s.Holds(lo), s.Holds(hi); {
	case passLo && passHi:
		c.Certainty = "pass"
	case !passLo && !passHi:
		c.Certainty = "fail"
	default:
		c.Certainty = "uncertain"
	}
}

// statFunc is the statistic an SLO compares, for the bootstrap.
func statFunc(s SLO) (func([]float64) float64, bool) {
	if s.def.samples == nil {
		return nil, false
	}
	if !s.def.Distribution() {
		// A one-number metric with per-request samples is their mean.
		return stats.Mean, true
	}
	if s.Stat == "mean" {
		return stats.Mean, true
	}
	if s.Stat == "max" {
		return stats.QuantileOf(1), true
	}
	for _, q := range stats.Quantiles {
		if q.Key == s.Stat {
			return stats.QuantileOf(q.P), true
		}
	}
	return nil, false
}
