package slo

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/record"
)

// text is the verdict in a sentence a person can act on, e.g. "meets the
// objective up to concurrency 4 (at concurrency 5: ttft p95 1.2s > 1s);
// saturates at concurrency 8; at concurrency 8 the p95 per-user speed is
// 12 tok/s, below 20 tok/s; does not hold at the target load, concurrency
// 8: ttft p95 3.1s > 1s".
func (v *Verdict) text(o *Objective) string {
	if len(v.Points) == 0 {
		return "nothing was measured"
	}
	parts := []string{v.capacityText()}
	parts = append(parts, v.saturationText(o)...)
	switch {
	case v.Holds:
		parts = append(parts, "holds at the target load, "+v.TargetLoad.Text(record.LoadLong))
	case v.Inconclusive:
		parts = append(parts, "INCONCLUSIVE at the target load, "+v.TargetLoad.Text(record.LoadLong)+": "+v.Why())
	default:
		parts = append(parts, "does not hold at the target load, "+v.TargetLoad.Text(record.LoadLong)+": "+strings.Join(v.Reasons, ", "))
	}
	return strings.Join(parts, "; ")
}

func (v *Verdict) capacityText() string {
	c := v.Capacity
	why := ""
	if c.FailsAt != nil {
		if pv, ok := findLoad(v.Points, *c.FailsAt); ok {
			why = strings.Join(failures(pv), ", ")
		} else {
			why = strings.Join(c.FailedSLOs, ", ")
		}
	}
	switch {
	case c.BoundedBy == BoundedByInvalid && c.Found:
		return fmt.Sprintf("meets the objective up to %s; beyond it the capacity is inconclusive (%s)", c.Load.Text(record.LoadLong), c.Invalid)
	case c.BoundedBy == BoundedByInvalid:
		return fmt.Sprintf("capacity inconclusive (%s)", c.Invalid)
	case c.BoundedBy == BoundedBySample && c.Found:
		return fmt.Sprintf("meets the objective up to %s; higher loads unknown: %s was not held (bounded by the sample, not by an SLO)", c.Load.Text(record.LoadLong), c.NotHeld)
	case c.BoundedBy == BoundedBySample:
		return fmt.Sprintf("capacity not judged: %s was not held (bounded by the sample, not by an SLO)", c.NotHeld)
	case c.Found && c.FailsAt != nil:
		return fmt.Sprintf("meets the objective up to %s (at %s: %s)", c.Load.Text(record.LoadLong), c.FailsAt.Text(record.LoadLong), why)
	case c.Found && c.BoundedBy == BoundedBySearchLimit:
		return "meets the objective at every load tried, up to the search's limit " + c.Load.Text(record.LoadLong)
	case c.Found:
		return "meets the objective at every load tried, up to " + c.Load.Text(record.LoadLong)
	case c.FailsAt != nil:
		return fmt.Sprintf("does not meet the objective even at %s (%s)", c.FailsAt.Text(record.LoadLong), why)
	}
	return "no load was judged"
}

func (v *Verdict) saturationText(o *Objective) []string {
	s := v.Saturation
	if !s.Found && s.Inconclusive != "" {
		return []string{"saturation not judged: " + s.Inconclusive}
	}
	if !s.Found {
		if len(v.Points) < 2 {
			return nil
		}
		return []string{"does not saturate up to " + v.Points[len(v.Points)-1].Load.Text(record.LoadLong)}
	}
	out := []string{"saturates at " + s.Load.Text(record.LoadLong)}
	if s.SpeedP5 == nil {
		return out
	}
	speed := fmt.Sprintf("at %s the p95 per-user speed is %s tok/s", s.Load.Text(record.LoadLong), trimFloat(*s.SpeedP5, 3))
	for _, c := range o.Checks() {
		if c.Metric == metricSpeed && c.Stat == "p5" {
			if c.Holds(*s.SpeedP5) {
				speed += ", meeting the objective's " + c.Format(c.Value)
			} else {
				speed += ", below the objective's " + c.Format(c.Value)
			}
		}
	}
	return append(out, speed)
}
