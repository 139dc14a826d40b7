// Package slo owns serving objectives and what is concluded from them: the
// SLO expression language, objective files and presets, per-request and
// per-load-point verdicts (goodput, attainment), capacity search, the
// saturation point and the comparison of candidate servers. It reads
// summaries and records; it never sends a request itself.
//
// It returns values; rendering them is report's. A verdict's one-sentence
// Text is part of the value (verdict JSON carries it), so slo writes it.
package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLO is one service-level objective: a statistic of a metric compared
// with a value. Value is in the metric's canonical unit (Unit).
type SLO struct {
	// Expr is the canonical text, e.g. "ttft p95 <= 1.5s".
	Expr   string `json:"expr"`
	Metric string `json:"metric"`
	// Percentile is as written: for a speed "p95" means 95% of requests
	// are at least this fast. Empty for metrics without a distribution.
	Percentile string `json:"percentile,omitempty"`
	// Stat is the statistic of the summary distribution compared: the
	// same as Percentile for latencies, the mirror image for speeds
	// (speed p95 reads decode_tps_per_request p5).
	Stat string `json:"stat,omitempty"`
	// Field is the summary.json field Stat is read from.
	Field string  `json:"field"`
	Op    string  `json:"op"`
	Value float64 `json:"value"`
	// Unit is Value's unit: ms, tok/s, fraction or requests.
	Unit string `json:"unit"`
	// display is the unit the expression was written in (s, ms, ...);
	// written is the value as written, with that unit.
	display, written string
	// def is the metric's definition (metric.go).
	def *metricDef
}

// HigherIsBetter reports whether larger measured values are better.
func (s SLO) HigherIsBetter() bool { return s.def.HigherIsBetter }

// PerRequest reports whether the SLO also judges each request (goodput).
func (s SLO) PerRequest() bool { return s.def.judge != nil }

// Key identifies the SLO a command-line --slo replaces: the metric and
// its percentile.
func (s SLO) Key() string { return s.Metric + " " + s.Percentile }

// Holds compares a measured value with the target.
func (s SLO) Holds(measured float64) bool {
	if math.IsNaN(measured) {
		return false
	}
	switch s.Op {
	case "<=":
		return measured <= s.Value
	case "<":
		return measured < s.Value
	case ">=":
		return measured >= s.Value
	default:
		return measured > s.Value
	}
}

// Margin is the headroom left: target − measured for a ceiling,
// measured − target for a floor. Negative when the SLO fails.
func (s SLO) Margin(measured float64) float64 {
	if s.HigherIsBetter() {
		return measured - s.Value
	}
	return s.Value - measured
}

// Format writes a value of this SLO's metric in the unit the SLO was
// written in, e.g. 1234.5 ms as "1.23s" for an SLO written in seconds.
func (s SLO) Format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	switch s.def.kind {
	case latency:
		return formatDuration(v, s.display)
	case fraction:
		return trimFloat(100*v, 3) + "%"
	case count:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return trimFloat(v, 3) + " tok/s"
	}
}

func formatDuration(ms float64, unit string) string {
	switch {
	case unit == "us" && ms < 1:
		return trimFloat(ms*1e3, 3) + "us"
	case ms < 1000:
		return trimFloat(ms, 3) + "ms"
	case unit == "m" && ms >= 60e3:
		return trimFloat(ms/6e4, 3) + "m"
	}
	return trimFloat(ms/1e3, 3) + "s"
}

// trimFloat formats v with about sig significant digits and no trailing
// zeros: 1.5, 312, 0.0123.
func trimFloat(v float64, sig int) string {
	if v == 0 {
		return "0"
	}
	digits := sig - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	digits = max(digits, 0)
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// String returns the canonical expression.
func (s SLO) String() string { return s.Expr }

func (s *SLO) setExpr() {
	parts := []string{s.Metric}
	if s.Percentile != "" {
		parts = append(parts, s.Percentile)
	}
	parts = append(parts, s.Op, s.written)
	s.Expr = strings.Join(parts, " ")
}

// errorf builds a parse error that quotes the expression.
func errorf(expr, format string, args ...any) error {
	return fmt.Errorf("SLO %q: %s", expr, fmt.Sprintf(format, args...))
}
