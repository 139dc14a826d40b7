package calib

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// DriftWarn is the change in the server's own decode step between the fit's
// run and a held-out run beyond which the comparison warns: 10%, the
// calibration goal's tolerance for decode speed and throughput (Goal), so that a
// miss of that size is not read as the fit's when the server itself moved.
// It warns only where the change is also beyond two standard errors of the
// two medians (a size seen in a few dozen steps moves by more than 10% by
// chance), and only for a size that holds at least driftShare of the
// point's decode-only steps.
const DriftWarn = goalThroughput

// driftShare is the share of a point's decode-only steps a batch size must
// hold for its change to warn. A size seen only at a point's edges (one
// sequence decoding while the others' requests reach the server, at eight
// users) runs in another context than the fit's steady steps at that size,
// and moves the point's figures by a fraction of its change; the table
// still lists it.
const driftShare = 0.25

// StepChange is the server's decode step at one batch size in the fit's run
// and in another run of the same server: the median of the decode-only
// steps at that size, classified as the fit's step table classifies them.
type StepChange struct {
	// Point is the other run's load point (its label, "c=8"): steps are
	// compared point by point, as a server may change during a run.
	Point     string  `json:"point"`
	Seqs      int     `json:"sequences"`
	FitGaps   int     `json:"fit_gaps"`
	FitMS     float64 `json:"fit_median_ms"`
	OtherGaps int     `json:"other_gaps"`
	OtherMS   float64 `json:"other_median_ms"`
	// SEMS is the standard error of OtherMS − FitMS, from both medians'.
	SEMS float64 `json:"se_ms"`
	// Share is the part of the other point's decode-only steps that ran
	// this many sequences.
	Share float64 `json:"share"`
	// Change is OtherMS/FitMS − 1: positive when the server stepped more
	// slowly in the other run.
	Change float64 `json:"change"`
}

// Moved says the step changed by DriftWarn or more, by more than two
// standard errors, at a size that holds driftShare of the point's steps.
func (c StepChange) Moved() bool {
	return math.Abs(c.Change) >= DriftWarn && math.Abs(c.OtherMS-c.FitMS) > 2*c.SEMS && c.Share >= driftShare
}

// StepChanges compares the fit's measured decode steps (its Table) with
// those of each load point of another run of the same server, at each
// batch size both saw at least minTableGaps times. The step at a given
// batch size is a property of the server and its host, not of the load: a
// held-out run whose steps differ from the fit run's shows the server (or
// the host under it) changed between the two, by that much, whatever the
// model.
func (f *Fit) StepChanges(recs []*record.Record) []StepChange {
	var order []int
	points := map[int][]request{}
	labels := map[int]string{}
	for _, r := range recs {
		q, ok := requestOf(r)
		if !ok {
			continue
		}
		if _, seen := points[r.Point]; !seen {
			order = append(order, r.Point)
			labels[r.Point] = r.Load.Label()
		}
		points[r.Point] = append(points[r.Point], q)
	}
	slices.Sort(order)
	// A load the run measured more than once is named by its point too,
	// so that its steps and warning are told apart from its repeats'.
	seen := map[string]int{}
	for _, p := range order {
		seen[labels[p]]++
	}
	var out []StepChange
	for _, p := range order {
		label := labels[p]
		if seen[label] > 1 {
			label = fmt.Sprintf("%s (point %d)", label, p)
		}
		out = append(out, f.stepChanges(label, points[p])...)
	}
	return out
}

func (f *Fit) stepChanges(point string, reqs []request) []StepChange {
	by := decodeSteps(observe(reqs))
	total := 0
	for _, gs := range by {
		total += len(gs)
	}
	var out []StepChange
	for _, t := range f.Table {
		gs := by[t.Seqs]
		if len(gs) < minTableGaps || !(t.MedianMS > 0) {
			continue
		}
		other := stepMS(gs)
		med := stats.Quantile(other, 0.5)
		se := math.Hypot(t.SEMS, medianSE(other, med))
		out = append(out, StepChange{Point: point, Seqs: t.Seqs, FitGaps: t.Gaps, FitMS: t.MedianMS, OtherGaps: len(gs), OtherMS: med, SEMS: se,
			Share: float64(len(gs)) / float64(total), Change: med/t.MedianMS - 1})
	}
	return out
}

// DriftWarnings are the warnings, one per load point of the run named
// other, for the batch sizes whose step moved (Moved) against the fit's
// run. sameRun says the points are of the run the fit read (its points
// the fit left out): the change is then from point to point, not between
// runs.
func DriftWarnings(changes []StepChange, other string, sameRun bool) []string {
	against, change := "the fit's run", "the server's change between the runs"
	if sameRun {
		against, change = "the fitted points of the same run", "the server's own change from point to point"
	}
	var out, moved []string
	flush := func(point string) {
		if len(moved) > 0 {
			out = append(out, fmt.Sprintf("%s: the server's own decode step moved against %s (%s; medians of decode-only steps in %s): "+
				"prediction errors there of that size are %s, not the fit's", point, against, strings.Join(moved, ", "), other, change))
		}
		moved = moved[:0]
	}
	for i, c := range changes {
		if c.Moved() {
			moved = append(moved, fmt.Sprintf("%+.0f%% at %d sequences (%.2f ms against %.2f), %.0f%% of its decode steps", 100*c.Change, c.Seqs, c.OtherMS, c.FitMS, 100*c.Share))
		}
		if i == len(changes)-1 || changes[i+1].Point != c.Point {
			flush(c.Point)
		}
	}
	return out
}
