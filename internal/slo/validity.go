package slo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Conclusions (Verdict.Conclusion): what a verdict concluded at its target
// load.
const (
	ConclusionHolds        = "holds"
	ConclusionNotMet       = "not_met"
	ConclusionInconclusive = "inconclusive"
)

// passOnly are the reasons that leave only a pass inconclusive.
var passOnly = []string{metrics.InvalidLoadNotHeld, metrics.InvalidServerEvent, metrics.InvalidFewSamples}

// qualify sets the load's validity from its points'. What makes every
// figure of a point the machine's rather than the server's (the simulator
// behind its clock, the client saturated) leaves any result inconclusive.
// What only weakens a pass (the load not held, a server restart,
// out-of-memory or exit during it, a percentile judged on fewer samples
// than it needs) leaves a pass inconclusive; a failure on it stands: less
// load than asked, a server that fell over, or a tail from few requests
// that already misses the target, misses it.
func (pv *PointVerdict) qualify(points metrics.Validity) {
	v := points.Without(passOnly...)
	if pv.Pass {
		if pv.NotHeld != "" {
			v.Add(metrics.Reason{Code: metrics.InvalidLoadNotHeld, Text: pv.NotHeld})
		}
		for _, r := range points.Reasons {
			if slices.Contains(passOnly, r.Code) {
				v.Add(r)
			}
		}
		var thin []string
		for _, c := range pv.Checks {
			if why, ok := c.fewSamples(); ok {
				thin = append(thin, why)
			}
		}
		if len(thin) > 0 {
			v.Add(metrics.Reason{Code: metrics.InvalidFewSamples, Text: "too few values: " + strings.Join(thin, ", ")})
		}
	}
	pv.Validity = v
}

// fewSamples says how a check's percentile rests on fewer values than it
// needs ("ttft p99 on 30 of the 100 it needs"): a pq needs at least
// 1/(1−q) of them (stats.MinSamples), 20 for a p95, 100 for a p99; a
// mean, a maximum or a one-number metric has no such floor.
func (c Check) fewSamples() (string, bool) {
	if c.Measured == nil {
		return "", false
	}
	for _, q := range stats.Quantiles {
		if q.Key != c.Stat {
			continue
		}
		if need := stats.MinSamples(q.P); c.Samples < need {
			name := strings.TrimSpace(c.Metric + " " + c.slo.Percentile)
			return fmt.Sprintf("%s on %d of the %d it needs", name, c.Samples, need), true
		}
	}
	return "", false
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
	return pv.Load.Text(record.LoadLong) + ": " + pv.Validity.String()
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
	prefix := "inconclusive at " + v.TargetLoad.Text(record.LoadLong) + ": "
	parts := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		parts[i] = strings.TrimPrefix(r, prefix)
	}
	return strings.Join(parts, "; ")
}
