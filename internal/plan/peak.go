package plan

import "github.com/servebench/servebench/internal/perfmodel"

// PeakModel is the shared performance model of the model on device d with
// the engine and formats of o, at full compute and bandwidth efficiency
// and without overheads: the roofs a calibration divides its fitted times
// into to read the efficiencies and overheads they imply.
func PeakModel(s *Shape, o Options, d Device) (perfmodel.Model, error) {
	o.Eff.Compute, o.Eff.Bandwidth, o.Eff.StepOverhead, o.Eff.RequestOverhead = 1, 1, 0, 0
	if o.Eff.Interconnect == 0 {
		o.Eff.Interconnect = 1
	}
	p, err := newPlanner(s, Workload{PromptTokens: 1, OutputTokens: 1, Concurrency: 1}, o)
	if err != nil {
		return perfmodel.Model{}, err
	}
	return p.perfModel(&d), nil
}
