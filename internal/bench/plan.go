package bench

import (
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/workload"
)

// Plan is a run's load and workload, resolved: what Setup's workload and
// point fields are set from (Apply).
type Plan struct {
	Points         []load.Point
	Prompt, Output workload.LengthDist
	// Spec is what is sent, its lengths those of the first cell.
	Spec workload.Spec
	// Cells are the workloads of a workload matrix; one cell (no matrix)
	// leaves the points' Load.Workload empty.
	Cells []workload.Lengths
	Slice time.Duration // 0: no slices
}

// PlanWorkloads resolves a run's workload: its cells are cells when given
// (an objective's list), else the cross product of the prompt and output
// lengths; a single cell also sets the plan's two lengths. Its errors are
// the workload package's, naming their flag; the points are the caller's
// (MatrixPoints over the cells).
func PlanWorkloads(spec workload.Spec, cells []workload.Lengths, prompts, outputs []string) (*Plan, error) {
	if cells == nil {
		var err error
		if cells, err = workload.Cross(prompts, outputs); err != nil {
			return nil, err
		}
	}
	if _, err := workload.Matrix(spec, cells); err != nil {
		return nil, err
	}
	p := &Plan{Cells: cells, Spec: spec}
	p.Spec.PromptTokens, p.Spec.OutputTokens = cells[0].PromptTokens, cells[0].OutputTokens
	var err error
	if p.Prompt, err = workload.ParseLengthDist(cells[0].PromptTokens); err != nil {
		return nil, err
	}
	if p.Output, err = workload.ParseLengthDist(cells[0].OutputTokens); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply sets s's workload, points and slices to the plan's.
func (p *Plan) Apply(s *Setup) {
	s.Prompt, s.Output, s.Workload, s.Matrix = p.Prompt, p.Output, p.Spec, p.Cells
	s.Points, s.Slice = p.Points, p.Slice
}
