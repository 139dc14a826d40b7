package slo

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/stats"
)

// Conclusions (Verdict.Conclusion): what a verdict concluded at its target
// load.
const (
	ConclusionHolds        = "holds"
	ConclusionNotMet       = "not_met"
	ConclusionInconclusive = "inconclusive"
)

// qualify sets the load's validity from its points'. What makes every
// figure of a point another's than the server's (the simulator behind its
// clock, the client saturated, a server restart, out-of-memory or exit)
// leaves any result inconclusive. What only weakens a pass (the load not
// held, a percentile judged on fewer samples than it needs) leaves a pass
// inconclusive; a failure on it stands: less load than asked or a tail
// from few requests that already misses the target misses it.
func (pv *PointVerdict) qualify(points metrics.Validity) {
	v := points.Without(metrics.InvalidLoadNotHeld)
	if pv.Pass {
		if pv.NotHeld != "" {
			v.Add(metrics.Reason{Code: metrics.InvalidLoadNotHeld, Text: pv.NotHeld})
		}
		for _, r := range points.Reasons {
			if r.Code == metrics.InvalidLoadNotHeld {
				v.Add(r)
			}
		}
		for _, c := range pv.Checks {
			if r, ok := c.fewSamples(); ok {
				v.Add(r)
			}
		}
	}
	pv.Validity = v
}

// fewSamples is the reason a check's percentile rests on fewer values than
// it needs: a pq needs at least 1/(1−q) of them (stats.MinSamples), 20 for
// a p95, 100 for a p99; a mean, a maximum or a one-number metric has no
// such floor.
func (c Check) fewSamples() (metrics.Reason, bool) {
	if c.Measured == nil {
		return metrics.Reason{}, false
	}
	for _, q := range stats.Quantiles {
		if q.Key != c.Stat {
			continue
		}
		if need := stats.MinSamples(q.P); c.Samples < need {
			name := strings.TrimSpace(c.Metric + " " + c.slo.Percentile)
			return metrics.Reason{Code: metrics.InvalidFewSamples,
				Text: fmt.Sprintf("%s judged on %d values; it needs at least %d", name, c.Samples, need)}, true
		}
	}
	return metrics.Reason{}, false
}

// Inconclusive reports whether the load's evidence cannot carry its result.
func (pv PointVerdict) Inconclusive() bool { return !pv.Validity.Valid() }

// inconclusiveText is the reason an invalid load's result is not
// concluded: "inconclusive at concurrency 8: sim_behind: ...".
func inconclusiveText(pv PointVerdict) string {
	return "inconclusive at " + invalidText(pv)
}

// invalidText names an invalid load and its reasons: "concurrency 8:
// sim_behind: ...".
func invalidText(pv PointVerdict) string {
	return LoadText(pv.Load) + ": " + pv.Validity.String()
}

// saturationEvidence is the run of loads, from the lowest, that are valid
// evidence (a few samples for a percentile do not matter to throughput
// and mean latency), and the first load that is not, if any.
func saturationEvidence(pts []PointVerdict) ([]PointVerdict, *PointVerdict) {
	for i, p := range pts {
		if !p.Validity.Without(metrics.InvalidFewSamples).Valid() {
			return pts[:i], &pts[i]
		}
	}
	return pts, nil
}

// Why is what an inconclusive verdict's reasons say, each without the
// target load it names already ("sim_behind: ..." for "inconclusive at
// concurrency 8: sim_behind: ..."); a matrix's keep their cell.
func (v *Verdict) Why() string {
	prefix := "inconclusive at " + LoadText(v.TargetLoad) + ": "
	parts := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		parts[i] = strings.TrimPrefix(r, prefix)
	}
	return strings.Join(parts, "; ")
}
