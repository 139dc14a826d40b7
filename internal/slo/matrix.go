package slo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
)

// byWorkload splits per-load verdicts, ordered by workload then load, into
// one run of points per workload.
func byWorkload(pts []PointVerdict) [][]PointVerdict {
	var out [][]PointVerdict
	for i, p := range pts {
		if i == 0 || p.Load.Workload != pts[i-1].Load.Workload {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// judgeMatrix judges a workload matrix: each cell on its own (its
// capacity, saturation and target load), then the matrix as a whole, which
// holds when every cell does and whose capacity is the lowest cell's.
func judgeMatrix(o *Objective, cells [][]PointVerdict, capy map[string]*Capacity, reqs []Requirement) *Verdict {
	v := &Verdict{Objective: o.Name, TargetLoad: o.Load.TargetLoad(), Reasons: []string{}, Holds: true, Requirements: reqs}
	v.Saturation.Gain = saturation(nil).Gain
	failed, inconclusive := 0, 0
	for _, pts := range cells {
		w := pts[0].Load.Workload
		cv := judge(o, pts, capy[w], []Requirement{}, w)
		v.Workloads = append(v.Workloads, cv)
		v.Points = append(v.Points, pts...)
		v.Failing = v.Failing || cv.Failing
		if cv.Inconclusive {
			inconclusive++
		}
		if !cv.Holds {
			if !cv.Inconclusive {
				failed++
			}
			v.Holds = false
			for _, r := range cv.Reasons {
				v.Reasons = append(v.Reasons, w+": "+r)
			}
		}
	}
	for _, c := range o.Workloads {
		if !slices.ContainsFunc(v.Workloads, func(cv *Verdict) bool { return cv.Workload == c.Label() }) {
			v.Holds = false
			v.Reasons = append(v.Reasons, c.Label()+": not measured")
		}
	}
	for _, r := range reqs {
		if r.Pass != nil && !*r.Pass {
			v.Holds = false
			v.Reasons = append(v.Reasons, r.Note)
		}
	}
	// a workload that does not hold on valid evidence decides the matrix
	v.Inconclusive = !v.Holds && inconclusive > 0 && failed == 0 && len(v.Reasons) == inconclusiveReasons(v.Workloads)
	v.conclude()
	v.Capacity = lowestCapacity(v.Workloads)
	v.Text = matrixText(v, failed)
	return v
}

// inconclusiveReasons counts the reasons of the inconclusive cells.
func inconclusiveReasons(cells []*Verdict) int {
	n := 0
	for _, cv := range cells {
		if cv.Inconclusive {
			n += len(cv.Reasons)
		}
	}
	return n
}

// lowestCapacity is the capacity of the cell that meets the objective
// least far: one not judged or never met first, else the lowest load. Its
// Load names that cell; Probes counts every cell's.
func lowestCapacity(cells []*Verdict) Capacity {
	var low *Capacity
	probes := 0
	for _, cv := range cells {
		c := &cv.Capacity
		probes += c.Probes
		if low == nil || capacityBelow(c, low) {
			low = c
		}
	}
	out := *low
	out.Probes = probes
	return out
}

// capacityBelow reports whether capacity a is lower than b. Of two not
// found, one that fails at the lowest load is lower than one not judged.
func capacityBelow(a, b *Capacity) bool {
	if a.Found != b.Found {
		return !a.Found
	}
	if !a.Found {
		return a.FailsAt != nil && b.FailsAt == nil
	}
	return a.Found && LoadValue(*a.Load) < LoadValue(*b.Load)
}

// matrixText is the matrix's verdict in a sentence: at the target load,
// which workloads hold, and the load every workload meets. Each cell's own
// sentence is in its verdict.
func matrixText(v *Verdict, failed int) string {
	n := len(v.Workloads)
	at := "at the target load, " + v.TargetLoad.Text(record.LoadLong)
	var held string
	switch {
	case failed == 0 && v.Holds:
		held = fmt.Sprintf("holds for every one of the %d workloads %s", n, at)
	case v.Inconclusive:
		held = "INCONCLUSIVE " + at + ": " + strings.Join(v.Reasons, ", ")
	case failed == 0:
		held = "does not hold " + at + ": " + strings.Join(v.Reasons, ", ")
	default:
		var names []string
		for _, cv := range v.Workloads {
			if !cv.Holds && !cv.Inconclusive {
				names = append(names, cv.Workload)
			}
		}
		held = fmt.Sprintf("does not hold for %d of the %d workloads %s (%s)", failed, n, at, strings.Join(names, ", "))
	}
	c := v.Capacity
	switch {
	case c.Found && c.Load != nil:
		return fmt.Sprintf("%s; every workload meets the objective up to %s (lowest: %s)", held, c.Load.Text(record.LoadLong), c.Load.Workload)
	case c.FailsAt != nil:
		return fmt.Sprintf("%s; %s does not meet the objective even at %s", held, c.FailsAt.Workload, c.FailsAt.Text(record.LoadLong))
	}
	return held + "; the capacity of at least one workload was not judged"
}
