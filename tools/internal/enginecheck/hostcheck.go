package enginecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

// The engine's resident memory under load, against the planner's memory
// for the same model and slots (servebench plan --gguf ... --json).
const (
	// MinWeightsResident: on a CPU every weight matrix is read for every
	// decoded token, so under load all of them are resident, mapped from
	// the file or copied; only the token-embedding table is read row by
	// row (under 5% of the test model's bytes). A tree holding less than
	// 90% of the weights is not the process that serves the model.
	MinWeightsResident = 0.9
	// RuntimePerProcess is what each engine process may hold beyond the
	// plan: the engine binary's mapped code (Ollama's, with llama.cpp
	// linked in, runs to tens of MiB), its Go runtime and thread stacks.
	// Above the plan's total plus this per process, the reading is not
	// of the model's memory (or the plan misses a term). Measured in CI:
	// server and runner together 250-251 MiB at peak against a plan of
	// 192.5 MiB (4 slots x 4096), i.e. under 30 MiB each beyond the plan.
	RuntimePerProcess = 256 << 20
)

// PlanMemory is what a plan says the model needs on its first device.
type PlanMemory struct {
	Device string
	// Weights is the model's weight bytes; Total adds the KV cache,
	// compute buffers and the planner's headroom.
	Weights, Total int64
}

// ReadPlanMemory reads the memory figures of a servebench.plan/v1 document.
func ReadPlanMemory(data []byte) (PlanMemory, error) {
	var r plan.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return PlanMemory{}, fmt.Errorf("plan JSON: %w", err)
	}
	if r.Schema != plan.Schema {
		return PlanMemory{}, fmt.Errorf("plan JSON: schema %q, want %q (servebench plan --json)", r.Schema, plan.Schema)
	}
	if len(r.Devices) == 0 || r.Devices[0].Budget.Weights <= 0 {
		return PlanMemory{}, errors.New("plan JSON: no device with a weights budget (plan with one --gpu)")
	}
	b := r.Devices[0].Budget
	return PlanMemory{Device: r.Devices[0].Device, Weights: b.Weights, Total: b.Total}, nil
}

// HostCheck is what one run's host telemetry says of the engine's
// processes, found through the port the run's target listened on.
type HostCheck struct {
	Dir string
	// Samples are the host readings that followed a server process.
	Samples   int
	Processes int     // most processes in its tree (Ollama: server and runner)
	RSSMax    float64 // bytes, the tree's peak
	CPUMax    float64 // % of one core, the tree's peak
	// Points are the run's load points; WithHost those whose summary has
	// the server's RSS and CPU in points[].telemetry.host.
	Points, WithHost int
	Plan             PlanMemory
	Problems         []string
}

// OK says every check passed.
func (c *HostCheck) OK() bool { return len(c.Problems) == 0 }

// CheckHost reads dir's telemetry.jsonl and summary.json and checks that
// the server's tree was found with more than one process (the runner
// beside the server), read with non-zero memory and CPU during load, in
// every load point's summary, and holding the model's weights but not
// absurdly more than the plan.
func CheckHost(dir string, mem PlanMemory) (*HostCheck, error) {
	c := &HostCheck{Dir: dir, Plan: mem}
	if err := c.readSamples(dir); err != nil {
		return nil, err
	}
	if err := c.readSummary(dir); err != nil {
		return nil, err
	}
	c.judge()
	return c, nil
}

// readSamples reads the run's telemetry as every reader of a run directory
// does (rundir.ScanTelemetry: damaged lines skipped, one sample at a time).
func (c *HostCheck) readSamples(dir string) error {
	_, err := rundir.ScanTelemetry(dir, func(s *telemetry.Sample) {
		h := s.Host
		if h == nil || h.ServerPID == 0 || s.Instance != telemetry.InstanceProcfs {
			return
		}
		c.Samples++
		c.Processes = max(c.Processes, h.ServerProcesses)
		if h.ServerRSSBytes != nil {
			c.RSSMax = max(c.RSSMax, *h.ServerRSSBytes)
		}
		if h.ServerCPUPercent != nil {
			c.CPUMax = max(c.CPUMax, *h.ServerCPUPercent)
		}
	})
	return err
}

// readSummary reads the run's summary, rebuilt from its records when the
// run left none (rundir.SummaryJSON).
func (c *HostCheck) readSummary(dir string) error {
	data, _, err := rundir.SummaryJSON(dir, rundir.Options{})
	if err != nil {
		return err
	}
	var s metrics.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	c.Points = len(s.Points)
	for _, p := range s.Points {
		if p.Telemetry == nil || p.Telemetry.Host == nil {
			continue
		}
		h := p.Telemetry.Host
		if h.ServerRSSBytesMax != nil && *h.ServerRSSBytesMax > 0 && h.ServerCPUPercentMean != nil && *h.ServerCPUPercentMean > 0 {
			c.WithHost++
		}
	}
	return nil
}

func (c *HostCheck) judge() {
	fail := func(format string, a ...any) { c.Problems = append(c.Problems, fmt.Sprintf(format, a...)) }
	if c.Samples == 0 {
		fail("no host sample followed the server process (was it found through the target's port?)")
		return
	}
	if c.Processes < 2 {
		fail("the server's tree had at most %d process: the runner child was not found", c.Processes)
	}
	if c.RSSMax <= 0 || c.CPUMax <= 0 {
		fail("resident memory %s and CPU %.1f%% at their peaks: both must be read and non-zero under load", mibs(c.RSSMax), c.CPUMax)
	}
	if c.Points == 0 || c.WithHost < c.Points {
		fail("%d of %d load points have the server's RSS and CPU in points[].telemetry.host", c.WithHost, c.Points)
	}
	if low := MinWeightsResident * float64(c.Plan.Weights); c.RSSMax < low {
		fail("peak resident %s is under %.0f%% of the planned weights (%s)", mibs(c.RSSMax), 100*MinWeightsResident, mibs(float64(c.Plan.Weights)))
	}
	if high := float64(c.Plan.Total) + float64(max(c.Processes, 1))*RuntimePerProcess; c.RSSMax > high {
		fail("peak resident %s is over the plan's total %s plus %s per process (%d)", mibs(c.RSSMax), mibs(float64(c.Plan.Total)), mibs(RuntimePerProcess), c.Processes)
	}
}

func mibs(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// RenderHost writes one line per run and its problems as FAIL lines.
func RenderHost(w io.Writer, checks []*HostCheck) error {
	for _, c := range checks {
		for _, p := range c.Problems {
			fmt.Fprintf(w, "FAIL host %s: %s\n", c.Dir, p)
		}
		verdict := "ok"
		if !c.OK() {
			verdict = fmt.Sprintf("FAIL, %d problems", len(c.Problems))
		}
		if _, err := fmt.Fprintf(w, "host %s: %d samples, %d processes, peak RSS %s (plan: weights %s, total %s), peak CPU %.0f%% of one core, %d of %d points with host figures: %s\n",
			c.Dir, c.Samples, c.Processes, mibs(c.RSSMax), mibs(float64(c.Plan.Weights)), mibs(float64(c.Plan.Total)), c.CPUMax, c.WithHost, c.Points, verdict); err != nil {
			return err
		}
	}
	return nil
}
