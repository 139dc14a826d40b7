package sweep

import (
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
)

// PlanSpec is a configuration's plan as the sweep asks for it
// (--plan-config, --plan-args): plan's setup for that configuration, its
// one device picked, and the workload the sweep sends it.
type PlanSpec struct {
	Setup plan.Setup
	// Args are plan's flags as given for the configuration, its
	// placeholders expanded.
	Args     []string
	Workload plan.Workload
	// Warnings say how the workload was taken from the sweep's.
	Warnings []string
}

// Plan is a configuration's plan beside its measurement, in sweep.json
// (docs/OUTPUT.md, sweep.json).
type Plan struct {
	Device   string        `json:"device"`
	Engine   string        `json:"engine"`
	GPUs     int           `json:"gpus"`
	Args     []string      `json:"args"`
	Workload plan.Workload `json:"workload"`
	// Memory is what the plan needs on each GPU; PeakMemory what the run
	// measured.
	Memory     *PlannedMemory  `json:"memory"`
	PeakMemory *MeasuredMemory `json:"peak_memory"`
	// DecodeTPS is the planned per-user decode speed at Workload.
	DecodeTPS *float64 `json:"decode_tps_per_user"`
	// DecodeAt is Compare's decode speed at the configuration's
	// decode_tps_per_user_at_capacity load (else its first point).
	DecodeAt *DecodeAt `json:"decode_at"`
	// Compare is plan's comparison with the configuration's run, the
	// figures plan --compare RUN_DIR --json gives.
	Compare  *plan.Comparison `json:"compare"`
	Warnings []string         `json:"warnings"`
	Error    *string          `json:"error"`
}

// PlannedMemory is the plan's memory on each of its GPUs.
type PlannedMemory struct {
	PerGPUBytes int64       `json:"per_gpu_bytes"`
	UsableBytes int64       `json:"usable_bytes"`
	Fits        bool        `json:"fits"`
	Parts       plan.Budget `json:"parts"`
}

// MeasuredMemory is a run's peak memory: GPU memory summed over the GPUs
// sampled ("gpu"), else the server's RSS with its children
// ("server_rss").
type MeasuredMemory struct {
	Bytes  float64 `json:"bytes"`
	Source string  `json:"measured_source"`
	// Ratio is GPU memory over the plan's need on all its GPUs (per GPU x
	// gpus); none for RSS, which is host memory.
	Ratio *float64 `json:"ratio"`
}

// DecodeAt is the planned and measured per-user decode speed at one load.
type DecodeAt struct {
	Load      record.Load `json:"load"`
	DecodeTPS plan.Pair   `json:"decode_tps_per_user"`
}

// Where a measured peak comes from (MeasuredMemory.Source).
const (
	MemoryGPU       = "gpu"
	MemoryServerRSS = "server_rss"
)

// PlanWorkload is the workload a configuration is planned for: base
// (plan's defaults, and its --context) with the mean prompt and output
// lengths the sweep sends, at the most users its loads hold at once (the
// highest concurrency, or an open loop's cap), so that the memory plan
// holds them all. With no points (--startup-only) it is base.
func PlanWorkload(base plan.Workload, prompt, output workload.LengthDist, pts []load.Point) (plan.Workload, []string) {
	if len(pts) == 0 {
		return base, []string{"no load was run: planned for plan's default workload"}
	}
	w := base
	w.PromptTokens = max(1, int(math.Round(prompt.Mean())))
	w.OutputTokens = max(1, int(math.Round(output.Mean())))
	w.Concurrency = 0
	for _, p := range pts {
		w.Concurrency = max(w.Concurrency, p.Load.Concurrency, p.Load.MaxConcurrency)
	}
	if w.Concurrency == 0 {
		w.Concurrency = 1
		return w, []string{"open-loop loads without --max-concurrency: memory planned for one user"}
	}
	return w, nil
}

// PlanOf plans a configuration as s asks and sets its run's measurements
// beside the plan: its peak memory and, through plan's own comparison,
// each load point. A plan that fails is the Plan's Error.
func PlanOf(s *PlanSpec, c *Config) *Plan {
	p := &Plan{Args: s.Args, Workload: s.Workload, Warnings: append([]string{}, s.Warnings...)}
	if p.Args == nil {
		p.Args = []string{}
	}
	if len(s.Setup.Devices) == 1 {
		p.Device = s.Setup.Devices[0]
	}
	res, err := s.Setup.Plan(s.Workload)
	if err != nil {
		return p.failed(err)
	}
	if len(res.Devices) != 1 {
		return p.failed(plan.ErrOneDevice)
	}
	d := res.Devices[0]
	p.Device, p.Engine, p.GPUs = d.Device, res.Engine.Name, res.Engine.GPUs
	p.Warnings = append(p.Warnings, res.Warnings...)
	if !d.Supported {
		return p.failed(fmt.Errorf("%s: %s", d.Device, strings.Join(d.Reasons, "; ")))
	}
	p.Warnings = append(p.Warnings, d.Reasons...)
	p.Memory = &PlannedMemory{PerGPUBytes: d.Budget.Total, UsableBytes: d.Usable, Fits: d.Fits, Parts: d.Budget}
	tps := d.Perf.DecodeTPS
	p.DecodeTPS = &tps
	p.measured(c)
	if len(c.Points) == 0 || c.RunDir == "" {
		return p
	}
	comp, err := s.Setup.CompareRun(c.RunDir, func(w string) { p.Warnings = append(p.Warnings, w) })
	if err != nil {
		return p.failed(fmt.Errorf("comparing with the run: %w", err))
	}
	p.Compare = comp
	p.decodeAt(c)
	return p
}

func (p *Plan) failed(err error) *Plan {
	e := err.Error()
	p.Error = &e
	return p
}

// measured is the run's peak memory beside the plan's.
func (p *Plan) measured(c *Config) {
	switch {
	case c.PeakGPUMemoryBytes != nil:
		m := &MeasuredMemory{Bytes: *c.PeakGPUMemoryBytes, Source: MemoryGPU}
		if need := float64(p.Memory.PerGPUBytes) * float64(max(p.GPUs, 1)); need > 0 {
			r := m.Bytes / need
			m.Ratio = &r
		}
		p.PeakMemory = m
	case c.PeakServerRSSBytes != nil:
		p.PeakMemory = &MeasuredMemory{Bytes: *c.PeakServerRSSBytes, Source: MemoryServerRSS}
	}
}

// decodeAt picks the comparison's point at the configuration's
// decode-at-capacity load, else its first: the comparison is made of the
// run's summary, whose points are the configuration's, in order.
func (p *Plan) decodeAt(c *Config) {
	if len(p.Compare.Points) != len(c.Points) || len(c.Points) == 0 {
		return
	}
	i := 0
	if d := c.DecodeAtCapacity; d != nil {
		for j, pt := range c.Points {
			if pt.Load == d.Load {
				i = j
			}
		}
	}
	p.DecodeAt = &DecodeAt{Load: c.Points[i].Load, DecodeTPS: p.Compare.Points[i].DecodeTPS}
}
