package bench

import (
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
)

// MatrixPoints are a run's load points: every load of every workload cell,
// workload-major (a cell's loads run together, lowest first as given, so
// its curve is measured under one warm server state and a user reads the
// table in the order it ran). Each point is base with its index, load and
// arrival seed set; with fewer than two cells the points carry no
// workload, as a single-workload run always has.
func MatrixPoints(base load.Point, cells []workload.Lengths, loads []record.Load, seed uint64) []load.Point {
	labels := CellLabels(cells)
	points := make([]load.Point, 0, len(labels)*len(loads))
	for _, w := range labels {
		for _, l := range loads {
			p := base
			l.Workload = w
			p.Index, p.Load, p.Seed = len(points), l, seed+uint64(len(points))
			points = append(points, p)
		}
	}
	return points
}

// CellLabels are the Load.Workload values of a run's cells: each cell's
// label, or the single "" of a run with one workload.
func CellLabels(cells []workload.Lengths) []string {
	if len(cells) <= 1 {
		return []string{""}
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Label()
	}
	return out
}
