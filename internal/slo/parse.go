package slo

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Parse reads an SLO expression:
//
//	METRIC [PERCENTILE] OP VALUE[UNIT]
//	ttft p95 <= 1.5s
//	itl p95 <= 50ms
//	e2e p99 <= 20s
//	speed p95 >= 20 tok/s          95% of requests decode at 20 tok/s or faster
//	error_rate <= 0.5%
//	throughput >= 2000 tok/s       aggregate output tokens/s of the load point
//	out_of_memory <= 0
//
// or the way people say a per-user speed: "at least 20 tok/s per user at
// p95" (the same as "speed p95 >= 20 tok/s"). Latencies need a unit (us,
// ms, s, m); an error rate is a fraction or a percentage. Latencies, error
// rates and counts take <= or <; speeds and throughput take >= or >.
func Parse(expr string) (SLO, error) {
	e := strings.ToLower(strings.TrimSpace(expr))
	e = strings.NewReplacer("≤", "<=", "≥", ">=", "µs", "us").Replace(e)
	if rest, ok := strings.CutPrefix(e, "at least "); ok {
		return parsePhrase(expr, rest)
	}
	i := strings.IndexAny(e, "<>=")
	if i < 0 {
		return SLO{}, errorf(expr, "no comparison: write e.g. 'ttft p95 <= 1.5s' or 'speed p95 >= 20 tok/s'")
	}
	op := e[i : i+1]
	if strings.HasPrefix(e[i+1:], "=") {
		op += "="
	}
	if op != "<" && op != "<=" && op != ">" && op != ">=" {
		return SLO{}, errorf(expr, "comparison %q: use <=, <, >= or >", op)
	}
	left := strings.Fields(e[:i])
	right := e[i+len(op):]
	if len(left) == 0 || len(left) > 2 {
		return SLO{}, errorf(expr, "want METRIC [PERCENTILE] before %s (metrics: %s)", op, metricNames())
	}
	pct := ""
	if len(left) == 2 {
		pct = left[1]
	}
	return build(expr, left[0], pct, op, right)
}

// parsePhrase reads "V tok/s per user at pNN" (after "at least").
func parsePhrase(expr, rest string) (SLO, error) {
	value, tail, ok := strings.Cut(rest, " per user")
	if !ok {
		return SLO{}, errorf(expr, "want 'at least V tok/s per user at pNN'")
	}
	tail = strings.TrimSpace(tail)
	pct := "p50"
	if at, ok := strings.CutPrefix(tail, "at "); ok {
		pct = strings.TrimSpace(at)
	} else if tail != "" {
		return SLO{}, errorf(expr, "unexpected %q: want 'at least V tok/s per user at pNN'", tail)
	}
	return build(expr, metricSpeed, pct, ">=", value)
}

// build checks and assembles the parts of an expression.
func build(expr, metric, pct, op, value string) (SLO, error) {
	m, ok := lookupMetric(metric)
	if !ok {
		return SLO{}, errorf(expr, "unknown metric %q (known: %s)", metric, metricNames())
	}
	s := SLO{Metric: m.Name, Field: m.Field, Op: op, Unit: m.Unit, def: m}
	if err := s.setPercentile(expr, pct); err != nil {
		return SLO{}, err
	}
	if err := s.checkDirection(expr); err != nil {
		return SLO{}, err
	}
	if err := s.setValue(expr, value); err != nil {
		return SLO{}, err
	}
	s.setExpr()
	return s, nil
}

// percentileAlias maps what may be written to the canonical key.
var percentileAlias = map[string]string{
	"p50": "p50", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99",
	"p99.9": "p999", "p999": "p999", "mean": "mean", "avg": "mean", "average": "mean", "max": "max",
	"p1": "p1", "p5": "p5", "p10": "p10",
}

// speedStat maps a speed percentile, meaning "this share of requests is at
// least this fast", to the low quantile of the speed distribution.
var speedStat = map[string]string{"p50": "p50", "p90": "p10", "p95": "p5", "p99": "p1", "mean": "mean"}

func (s *SLO) setPercentile(expr, pct string) error {
	if !s.def.Distribution() {
		if pct != "" {
			return errorf(expr, "%s is one number per load point; it takes no percentile", s.Metric)
		}
		return nil
	}
	if pct == "" {
		return errorf(expr, "%s needs a percentile or the mean, e.g. '%s p95 ...'", s.Metric, s.Metric)
	}
	key, ok := percentileAlias[pct]
	if !ok {
		return errorf(expr, "percentile %q: use p50, p90, p95, p99, p99.9, mean or max", pct)
	}
	s.Percentile, s.Stat = key, key
	if s.def.kind != speed {
		if key == "p1" || key == "p5" || key == "p10" {
			return errorf(expr, "%s %s bounds only the fastest requests; a latency objective is an upper percentile (p90, p95, p99)", s.Metric, key)
		}
		return nil
	}
	stat, ok := speedStat[key]
	if !ok {
		return errorf(expr, "for a speed, pNN means NN%% of requests are at least this fast, so use p50, p90, p95, p99 or mean (%s would bind only the fastest few)", pct)
	}
	s.Stat = stat
	return nil
}

func (s *SLO) checkDirection(expr string) error {
	floor := s.Op == ">" || s.Op == ">="
	if s.HigherIsBetter() && !floor && s.def.kind == fraction {
		return errorf(expr, "%s: higher is better, so write >= (e.g. '%s >= 50%%')", s.Metric, s.Metric)
	}
	if s.HigherIsBetter() && !floor {
		return errorf(expr, "%s is a speed: higher is better, so write >= (e.g. '%s >= 20 tok/s')", s.Metric, strings.TrimSpace(s.Metric+" "+s.Percentile))
	}
	if !s.HigherIsBetter() && floor {
		return errorf(expr, "%s: lower is better, so write <= (e.g. '%s <= %s')", s.Metric, strings.TrimSpace(s.Metric+" "+s.Percentile), example[s.def.kind])
	}
	return nil
}

var example = map[kind]string{latency: "1.5s", fraction: "0.5%", count: "0"}

// valueExample is a value of kind k as an SLO writes it.
func valueExample(k kind) string {
	if k == speed || k == throughput {
		return "20 tok/s"
	}
	return example[k]
}

// name is the SLO's metric with its percentile, as written before the
// comparison.
func (s *SLO) name() string { return strings.TrimSpace(s.Metric + " " + s.Percentile) }

// latencyUnits converts to milliseconds and names the display unit.
var latencyUnits = map[string]struct {
	ms      float64
	display string
}{
	"us": {1e-3, "us"}, "ms": {1, "ms"}, "s": {1e3, "s"}, "sec": {1e3, "s"},
	"m": {6e4, "m"}, "min": {6e4, "m"},
}

func (s *SLO) setValue(expr, text string) error {
	text = strings.ReplaceAll(strings.TrimSpace(text), " ", "")
	num, unit := splitNumber(text)
	v, err := strconv.ParseFloat(num, 64)
	switch {
	case text == "":
		return errorf(expr, "no value after %s, e.g. '%s %s %s'", s.Op, s.name(), s.Op, valueExample(s.def.kind))
	case num == "":
		return errorf(expr, "value %q is not a number, e.g. '%s %s %s'", text, s.name(), s.Op, valueExample(s.def.kind))
	case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(v), math.IsInf(v, 0) && err == nil, v < 0:
		return errorf(expr, "value %q is not a non-negative number", text)
	case v > 1e12:
		return errorf(expr, "value %q is more than 1e12", text)
	}
	num = strconv.FormatFloat(v, 'g', -1, 64)
	switch s.def.kind {
	case latency:
		u, ok := latencyUnits[unit]
		if !ok {
			return errorf(expr, "a latency needs a unit: us, ms, s or m (got %q)", unit)
		}
		s.Value, s.display = v*u.ms, u.display
		s.written = num + u.display
	case speed, throughput:
		if unit != "" && unit != "tok/s" && unit != "tokens/s" && unit != "t/s" && unit != "tps" {
			return errorf(expr, "unit %q: a speed is in tok/s", unit)
		}
		s.Value, s.written = v, num+" tok/s"
	case fraction:
		s.Value, s.written = v, num
		if unit == "%" {
			s.Value, s.written = v/100, num+"%"
		} else if unit != "" {
			return errorf(expr, "unit %q: %s is a fraction (0.005) or a percentage (0.5%%)", unit, s.Metric)
		}
		if s.Value > 1 {
			return errorf(expr, "%s is at most 100%%", s.Metric)
		}
	case count:
		if (unit != "" && unit != "requests") || v != math.Trunc(v) {
			return errorf(expr, "%s is a whole number of requests", s.Metric)
		}
		s.Value, s.written = v, num
	}
	return nil
}

// splitNumber splits "1.5s" into "1.5" and "s".
func splitNumber(s string) (num, unit string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+') {
		i += 2
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return s[:i], s[i:]
}
