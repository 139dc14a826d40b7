package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

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

// matrixLengths sets run.json's two lengths of a matrix to every cell's
// distribution (record.MatrixSep between them), in the order they first
// run.
func (c Config) matrixLengths() Config {
	if len(c.Run.Workloads) == 0 {
		return c
	}
	var prompts, outputs []string
	for _, w := range c.Run.Workloads {
		if !slices.Contains(prompts, w.PromptTokens) {
			prompts = append(prompts, w.PromptTokens)
		}
		if !slices.Contains(outputs, w.OutputTokens) {
			outputs = append(outputs, w.OutputTokens)
		}
	}
	c.Run.PromptTokens = strings.Join(prompts, record.MatrixSep)
	c.Run.OutputTokens = strings.Join(outputs, record.MatrixSep)
	return c
}

// sources hands out each point's workload source: from the one workload,
// or, in a matrix, from the workload of the point's cell.
type sources struct {
	one   *workload.Workload
	cells []record.WorkloadCell
	by    map[string]*workload.Workload
	means []float64
}

// newSources builds the run's workload, or one per matrix cell; every
// cell shares the prompt synthesiser, so prompts differ across cells too
// (no accidental prefix-cache hits) and one seed reproduces them all.
func newSources(spec workload.Spec, matrix []workload.Lengths, env workload.Env) (*sources, error) {
	if len(matrix) <= 1 {
		w, err := workload.New(spec, env)
		return &sources{one: w}, err
	}
	specs, err := workload.Matrix(spec, matrix)
	if err != nil {
		return nil, err
	}
	s := &sources{by: map[string]*workload.Workload{}}
	for i, cs := range specs {
		w, err := workload.New(cs, env)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", matrix[i].Label(), err)
		}
		s.by[matrix[i].Label()] = w
		s.cells = append(s.cells, matrix[i].Cell())
		d, _ := workload.ParseLengthDist(cs.PromptTokens) // validated by workload.New
		s.means = append(s.means, d.Mean())
	}
	return s, nil
}

// source is Config.NewSource. A point whose workload names no cell of
// the matrix is a caller's error; it gets a source that says so.
func (s *sources) source(p load.Point) workload.Source {
	if s.one != nil {
		return s.one.Source(p.Index)
	}
	if w, ok := s.by[p.Load.Workload]; ok {
		return w.Source(p.Index)
	}
	return failingSource{fmt.Errorf("load point %d: workload %q is not a cell of the matrix", p.Index, p.Load.Workload)}
}

// meanPrompt is the mean prompt length that sizes how many requests are
// prepared ahead: a matrix's longest cell, so that preparing never holds
// more than its budget.
func (s *sources) meanPrompt(single workload.LengthDist) float64 {
	if len(s.means) == 0 {
		return single.Mean()
	}
	return slices.Max(s.means)
}

// failingSource is a source that cannot produce a request.
type failingSource struct{ err error }

func (f failingSource) Next(context.Context) (workload.Item, error) { return workload.Item{}, f.err }
