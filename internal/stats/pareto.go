package stats

import (
	"cmp"
	"slices"
)

// Pareto returns the indices of the points on the frontier of two figures
// to maximise (x: aggregate throughput, y: per-user speed): the points no
// other point beats, that is equals or betters on both figures and betters
// on one. Points with a NaN figure are never on it; equal points are all
// on it. The indices come in increasing x, so the frontier can be drawn
// through them as they come (y then falls).
func Pareto(x, y []float64) []int {
	var out []int
	for i := range x {
		if x[i] != x[i] || y[i] != y[i] {
			continue
		}
		if !dominated(i, x, y) {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Or(cmp.Compare(x[a], x[b]), cmp.Compare(y[b], y[a])) })
	return out
}

// dominated reports whether a point beats point i.
func dominated(i int, x, y []float64) bool {
	for j := range x {
		if j == i || x[j] != x[j] || y[j] != y[j] {
			continue
		}
		if x[j] >= x[i] && y[j] >= y[i] && (x[j] > x[i] || y[j] > y[i]) {
			return true
		}
	}
	return false
}
