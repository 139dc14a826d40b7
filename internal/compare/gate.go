package compare

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// Gate is a regression threshold (compare --fail-on-regression): the
// statistic, and how much worse it may get.
type Gate struct {
	Stat slo.Statistic
	// Relative thresholds are a fraction of A's value (0.1 for +10%);
	// absolute ones are in the statistic's unit. An error rate's "+1%" is
	// one percentage point, absolute: a relative change of a rate near
	// zero means nothing.
	Relative  bool
	Threshold float64
}

// ParseGate reads a regression threshold:
//
//	METRIC [PERCENTILE] +N%     ttft p95 +10%   (latencies: worse is up)
//	METRIC [PERCENTILE] -N%     speed p50 -5%   (speeds, throughput: worse is down)
//	METRIC [PERCENTILE] ±N UNIT e2e p99 +200ms, throughput -50 tok/s
//	error_rate +N%              one percentage point is +1%
//
// Metric and percentile names are those of SLOs (slo.Parse); the sign
// must be the direction in which the metric gets worse. Errors do not quote
// text: the flag that carried it does.
func ParseGate(text string) (Gate, error) {
	t := strings.TrimSpace(text)
	i := strings.IndexAny(t, "+-")
	if i < 0 {
		return Gate{}, fmt.Errorf("no threshold: write e.g. 'ttft p95 +10%%' or 'speed p50 -5%%'")
	}
	st, err := slo.ParseStatistic(t[:i])
	if err != nil {
		return Gate{}, errors.New(reason(err))
	}
	worse := "+"
	if st.HigherIsBetter() {
		worse = "-"
	}
	if sign := t[i : i+1]; sign != worse {
		return Gate{}, fmt.Errorf("%s gets worse when it %s, so its threshold is written %sN (e.g. '%s %s5%%')",
			st.Name(), map[string]string{"+": "rises", "-": "falls"}[worse], worse, st.Name(), worse)
	}
	g := Gate{Stat: st}
	value := strings.ReplaceAll(t[i+1:], " ", "")
	if num, ok := strings.CutSuffix(value, "%"); ok && st.Unit != "fraction" { // a fraction's % is its value, in points
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || !(v >= 0) || v > 1e6 {
			return Gate{}, fmt.Errorf("%q is not a non-negative percentage", num)
		}
		g.Relative, g.Threshold = true, v/100
		return g, nil
	}
	// An absolute threshold is written as an SLO's value is, in its units.
	op := map[bool]string{true: ">=", false: "<="}[st.HigherIsBetter()]
	s, err := slo.Parse(st.Name() + " " + op + " " + value)
	if err != nil {
		return Gate{}, errors.New(reason(err))
	}
	g.Threshold = s.Value
	return g, nil
}

// reason is an SLO parse error without the expression it quotes (the
// gate's own text is quoted by the flag).
func reason(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, "\": "); ok && strings.HasPrefix(msg, "SLO \"") {
		return after
	}
	return msg
}

// String is the canonical text of the gate: "ttft p95 +10%".
func (g Gate) String() string {
	sign := "+"
	if g.Stat.HigherIsBetter() {
		sign = "-"
	}
	if g.Relative {
		return g.Stat.Name() + " " + sign + strconv.FormatFloat(100*g.Threshold, 'g', -1, 64) + "%"
	}
	if g.Stat.Unit == "fraction" {
		return g.Stat.Name() + " " + sign + strconv.FormatFloat(100*g.Threshold, 'g', -1, 64) + "%"
	}
	return g.Stat.Name() + " " + sign + strconv.FormatFloat(g.Threshold, 'g', -1, 64) + unitSuffix(g.Stat.Unit)
}

func unitSuffix(unit string) string {
	if unit == "ms" {
		return "ms"
	}
	return " " + unit
}

// GateResult is one gate judged at one load point.
type GateResult struct {
	Gate   string      `json:"gate"`
	Load   record.Load `json:"load"`
	Metric string      `json:"metric"`
	// Threshold is how much worse the metric may get: a fraction of A's
	// value when Relative, else in Unit.
	Threshold float64 `json:"threshold"`
	Relative  bool    `json:"relative"`
	Unit      string  `json:"unit"`
	// Worse is how much worse B is than A, in the threshold's terms;
	// negative when B is better.
	Worse *float64 `json:"worse"`
	// Failed is true when Worse is beyond the threshold and the change
	// is beyond its interval (the interval of B − A lies wholly on the
	// worse side of 0). A change without an interval (unknown: one run
	// each of throughput, or runs too short to slice) does not fail.
	Failed bool   `json:"failed"`
	Reason string `json:"reason"`
	// Inconclusive is true when the point's evidence is invalid
	// (Point.Inconclusive): the gate neither failed nor passed there.
	Inconclusive bool `json:"inconclusive,omitempty"`
}

// judgeGates judges every gate at every common point.
func (r *Result) judgeGates(gates []Gate) {
	for _, g := range gates {
		for _, p := range r.Points {
			for _, c := range p.Changes {
				if c.Metric == g.Stat.Name() {
					gr := g.judge(p.Load, c)
					if p.Inconclusive != "" {
						gr = gr.inconclusive(p.Inconclusive)
					}
					r.Regressed = r.Regressed || gr.Failed
					r.Inconclusive = r.Inconclusive || gr.Inconclusive
					r.Gates = append(r.Gates, gr)
				}
			}
		}
	}
	r.Inconclusive = r.Inconclusive && !r.Regressed
}

// Failures are the gates that failed, each with the load it failed at
// ("ttft p95 +10% at c=8").
func (r *Result) Failures() []string {
	var out []string
	for _, g := range r.Gates {
		if g.Failed {
			out = append(out, g.Gate+" at "+g.Load.Label())
		}
	}
	return out
}

// InconclusiveAt are the common points whose evidence is invalid, each
// with the reason ("c=8 (the simulator fell behind)").
func (r *Result) InconclusiveAt() []string {
	var out []string
	for _, p := range r.Points {
		if p.Inconclusive != "" {
			out = append(out, p.Load.Label()+" ("+p.Inconclusive+")")
		}
	}
	return out
}

// judge decides one gate on one change.
func (g Gate) judge(l record.Load, c Change) GateResult {
	gr := GateResult{Gate: g.String(), Load: l, Metric: c.Metric, Threshold: g.Threshold, Relative: g.Relative, Unit: c.Unit}
	if c.Diff == nil {
		gr.Reason = "not judged: " + c.Why
		return gr
	}
	w := *c.Diff
	if c.HigherIsBetter {
		w = -w
	}
	if g.Relative {
		w = relWorse(w, *c.A)
	}
	gr.Worse = num(w)
	beyond := w > g.Threshold
	switch {
	case !beyond:
		gr.Reason = "within the threshold"
	case c.Verdict == Worse:
		gr.Failed, gr.Reason = true, "beyond the threshold and beyond its interval"
	case c.CI == nil:
		gr.Reason = "beyond the threshold, but whether beyond noise is unknown (" + c.Why + "), so it does not fail"
	default:
		gr.Reason = "beyond the threshold but inside noise: its interval contains no change"
	}
	return gr
}

// relWorse is a worsening w relative to A's value a; any worsening of a
// zero is beyond every relative threshold.
func relWorse(w, a float64) float64 {
	if a == 0 {
		if w > 0 {
			return math.MaxFloat64
		}
		return 0
	}
	return w / math.Abs(a)
}
