package bench

import (
	"errors"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
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
	// Trace, when set, is replayed (PlanTrace): its lengths replace the
	// workload's.
	Trace *workload.Trace
}

// Defaults of a run, servebench run's and the public package's: against
// the simulator they let a newcomer see the full shape of a result
// (per-request speed falling, aggregate throughput saturating) in seconds.
const (
	DefaultPromptTokens = "512"
	DefaultOutputTokens = "128"
	DefaultTokenizer    = "auto"
)

// DefaultConcurrency are a run's closed-loop loads when it is given none.
func DefaultConcurrency() []int { return []int{1, 2, 4, 8, 16} }

// PlanSpec is a run's load and workload as given, for NewPlan.
type PlanSpec struct {
	// Workload is what is sent. Cells are its workloads when given (an
	// objective's list), else the cross product of Prompts and Outputs
	// (none: DefaultPromptTokens and DefaultOutputTokens).
	Workload         workload.Spec
	Cells            []workload.Lengths
	Prompts, Outputs []string
	// Loads are the load levels (none: DefaultConcurrency); Point is each
	// one's amount and arrivals (SetPoints).
	Loads []record.Load
	Point load.Point
	Seed  uint64
	// Slice is the slice length, resolved (SliceLength); 0: none.
	Slice time.Duration
}

// ForObjective sets what an objective (resolved: slo.Resolve) specifies
// over what was given: its workload or workloads, its load levels, and
// each point's amount and warm-up. The arrivals, seed and slice stay.
func (s *PlanSpec) ForObjective(o *slo.Objective) {
	s.Workload, s.Cells, s.Loads = o.Workload, o.Workloads, o.Load.Levels()
	s.Prompts, s.Outputs = []string{o.Workload.PromptTokens}, []string{o.Workload.OutputTokens}
	requests, d, warm := o.Load.Amount()
	s.Point.Requests, s.Point.Duration = requests, d
	s.Point.WarmupRequests, s.Point.WarmupDuration = warm.Requests, warm.Duration
}

// NewPlan resolves a run's plan from what was given, the defaults filling
// what was not: its workloads (PlanWorkloads), then its points.
func NewPlan(s PlanSpec) (*Plan, error) {
	prompts, outputs := s.Prompts, s.Outputs
	if len(prompts) == 0 {
		prompts = []string{DefaultPromptTokens}
	}
	if len(outputs) == 0 {
		outputs = []string{DefaultOutputTokens}
	}
	p, err := PlanWorkloads(s.Workload, s.Cells, prompts, outputs)
	if err != nil {
		return nil, err
	}
	p.Slice = s.Slice
	loads := s.Loads
	if len(loads) == 0 {
		loads = Levels(DefaultConcurrency(), nil, 0)
	}
	p.SetPoints(s.Point, loads, s.Seed)
	return p, nil
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
	s.Points, s.Slice, s.Trace = p.Points, p.Slice, p.Trace
}

// Sustained runs (docs/METRICS.md, "Slices and drift") cut each load
// point's window into slices of model time and check them for drift.
//
// A run of at least DefaultSliceFrom is sliced by DefaultSlice unless told
// otherwise: such a run is long because its sustained behaviour matters,
// and one-minute slices give it at least ten points for the drift's slope.
const (
	DefaultSliceFrom = 10 * time.Minute
	DefaultSlice     = time.Minute
)

// ErrSliceTooLong: a slice longer than the points it cuts.
var ErrSliceTooLong = errors.New("the slice is longer than the duration")

// SliceLength is the slice length of a run whose points last dur (0: a
// request count bounds them): the one given, which must fit in the
// duration, or for none given (0) the default of a long run; 0 for no
// slices.
func SliceLength(given, dur time.Duration) (time.Duration, error) {
	switch {
	case given > 0 && dur > 0 && given > dur:
		return 0, ErrSliceTooLong
	case given > 0:
		return given, nil
	case dur >= DefaultSliceFrom:
		return DefaultSlice, nil
	}
	return 0, nil
}

// DefaultRequests is each point's request count when neither a count nor
// a duration bounds it: servebench run's default, enough for a p95 with
// some requests beyond it.
const DefaultRequests = 100

// SetPoints sets the plan's points: every load of every workload cell
// (MatrixPoints), each measuring base's amount, or DefaultRequests when
// base bounds neither a request count nor a duration.
func (p *Plan) SetPoints(base load.Point, loads []record.Load, seed uint64) {
	if base.Requests == 0 && base.Duration == 0 {
		base.Requests = DefaultRequests
	}
	p.Points = MatrixPoints(base, p.Cells, loads, seed)
}

// Levels are the load levels of open-loop rates in requests per second,
// each capped at maxConcurrency requests in flight (0: none), when any is
// given, else of closed-loop concurrencies.
func Levels(concurrency []int, rates []float64, maxConcurrency int) []record.Load {
	var out []record.Load
	for _, r := range rates {
		out = append(out, record.Load{Rate: r, MaxConcurrency: maxConcurrency})
	}
	if len(rates) > 0 {
		return out
	}
	for _, c := range concurrency {
		out = append(out, record.Load{Concurrency: c})
	}
	return out
}
