package plan

import (
	"github.com/servebench/servebench/internal/telemetry"

	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Summary is the part of a run's summary.json (servebench.summary/v1) the
// planner compares against.
type Summary struct {
	Schema string         `json:"schema"`
	Points []SummaryPoint `json:"points"`
	Run    struct {
		Model     string  `json:"model"`
		TimeScale float64 `json:"time_scale"`
		Target    struct {
			Model  string            `json:"model"`
			Server map[string]string `json:"server"`
		} `json:"target"`
	} `json:"run"`
	// Warnings say how the summary was read (a conversion to model time).
	Warnings []string `json:"-"`
}

// legacyScale converts a summary written before summaries were in model
// time: a simulator run sped up by its time_scale (target.server) without
// run.time_scale has every time divided and every rate multiplied by it.
func (s *Summary) legacyScale() {
	v, err := strconv.ParseFloat(s.Run.Target.Server["time_scale"], 64)
	if s.Run.TimeScale != 0 || err != nil || !(v > 0) || v == 1 {
		return
	}
	for i := range s.Points {
		p := &s.Points[i]
		for _, d := range []*SummaryDist{&p.TTFT, &p.TPOT, &p.E2E, &p.Queue} {
			d.Mean, d.P50, d.P95 = d.Mean*v, d.P50*v, d.P95*v
		}
		p.DecodeTPS.Mean, p.DecodeTPS.P50, p.DecodeTPS.P95 = p.DecodeTPS.Mean/v, p.DecodeTPS.P50/v, p.DecodeTPS.P95/v
		p.OutputTPS, p.RequestRate, p.Load.Rate = p.OutputTPS/v, p.RequestRate/v, p.Load.Rate/v
	}
	s.Warnings = append(s.Warnings, fmt.Sprintf("the summary is in the simulator's sped-up time (time_scale %g, from an older servebench): converted to model time", v))
}

// model is the served model's name, wherever the summary carries it.
func (s *Summary) model() string {
	switch {
	case s.Run.Model != "":
		return s.Run.Model
	case s.Run.Target.Model != "":
		return s.Run.Target.Model
	case len(s.Points) > 0:
		return s.Points[0].Model
	}
	return ""
}

// SummaryPoint is one load point's measurements.
type SummaryPoint struct {
	Model string `json:"model"`
	Load  struct {
		Workload    string  `json:"workload"` // a workload matrix's cell
		Concurrency int     `json:"concurrency"`
		Rate        float64 `json:"rate"`
	} `json:"load"`
	Requests struct {
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"requests"`
	TTFT             SummaryDist `json:"ttft_ms"`
	TPOT             SummaryDist `json:"tpot_ms"`
	E2E              SummaryDist `json:"e2e_ms"`
	Queue            SummaryDist `json:"queue_ms"`
	DecodeTPS        SummaryDist `json:"decode_tps_per_request"`
	OutputTPS        float64     `json:"output_tps"`
	RequestRate      float64     `json:"request_rate"`
	PromptTokensMean float64     `json:"prompt_tokens_mean"`
	OutputTokensMean float64     `json:"output_tokens_mean"`
	// PeakMemoryBytes is the device's peak memory use, from the point's
	// telemetry when the run sampled its GPUs (the busiest one: the plan
	// is per device), or given as such.
	PeakMemoryBytes float64          `json:"peak_memory_bytes,omitempty"`
	Telemetry       *telemetry.Point `json:"telemetry,omitempty"`
}

// SummaryDist is the part of a summary.json distribution (stats.Dist) the
// comparison reads.
type SummaryDist struct {
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	Count int     `json:"count"`
}

// SummarySchema is the summary.json schema the comparison reads.
const SummarySchema = "servebench.summary/v1"

// ParseSummary decodes and checks a summary.
func ParseSummary(data []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	if s.Schema != SummarySchema {
		return nil, fmt.Errorf("summary.json: schema %q, want %q", s.Schema, SummarySchema)
	}
	if len(s.Points) == 0 {
		return nil, errors.New("summary.json: no points")
	}
	for i, p := range s.Points {
		if p.Load.Concurrency <= 0 && p.Load.Rate <= 0 {
			return nil, fmt.Errorf("summary.json: point %d has neither load.concurrency nor load.rate", i+1)
		}
	}
	s.legacyScale()
	for i := range s.Points {
		p := &s.Points[i]
		if v := p.Telemetry.PeakVRAMBytes(); v != nil && p.PeakMemoryBytes == 0 {
			p.PeakMemoryBytes = *v
		}
	}
	return &s, nil
}

// Pair is a measured value beside its prediction; Ratio is measured /
// predicted (0 when either is missing).
type Pair struct {
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	Ratio     float64 `json:"ratio"`
}

func pair(measured, predicted float64) Pair {
	p := Pair{Measured: sig(measured), Predicted: sig(predicted)}
	if measured > 0 && predicted > 0 && !math.IsInf(predicted, 0) {
		p.Ratio = sig(measured / predicted)
	}
	return p
}

// ComparePoint is one load point, predicted against measured.
type ComparePoint struct {
	Load         string  `json:"load"`
	Concurrency  float64 `json:"concurrency"`
	PromptTokens int     `json:"prompt_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Completed    int     `json:"completed"`
	Failed       int     `json:"failed"`
	TTFTP50      Pair    `json:"ttft_p50_s"`
	TTFTP95      Pair    `json:"ttft_p95_s"`
	// TTFTBurst is the predicted TTFT when all users' prompts arrive
	// together, beside the measured p95.
	TTFTBurst  Pair   `json:"ttft_burst_s"`
	TPOT       Pair   `json:"tpot_s"`
	DecodeTPS  Pair   `json:"decode_tps_per_request"`
	OutputTPS  Pair   `json:"output_tps"`
	PeakMemory *Pair  `json:"peak_memory_bytes,omitempty"`
	Bound      string `json:"predicted_bound"`
	Limit      string `json:"limit"`
	Why        string `json:"why"`
}

// Comparison is a run's load points against the plan's predictions.
type Comparison struct {
	Schema   string         `json:"schema"`
	Model    string         `json:"model"`
	RunModel string         `json:"run_model,omitempty"`
	Device   string         `json:"device"`
	Engine   string         `json:"engine"`
	GPUs     int            `json:"gpus"`
	Points   []ComparePoint `json:"points"`
	Warnings []string       `json:"warnings,omitempty"`
}

// CompareSchema names the comparison's JSON output.
const CompareSchema = "servebench.plan-compare/v1"

// Compare predicts each load point of a run on d and sets the measurement
// beside it. The workload's lengths and concurrency come from each point;
// its targets are ignored.
func Compare(s *Shape, o Options, d *Device, sum *Summary) (*Comparison, error) {
	c := &Comparison{Schema: CompareSchema, Model: s.Name, RunModel: sum.model(), Device: d.Name, GPUs: max(1, o.GPUs)}
	for _, pt := range sum.Points {
		cp, err := comparePoint(s, o, d, pt)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", loadName(pt), err)
		}
		c.Points = append(c.Points, cp)
	}
	if e, err := lookupEngine(o.Engine); err == nil {
		c.Engine = e.title
	}
	c.Warnings = append(c.Warnings, sum.Warnings...)
	c.Warnings = append(c.Warnings, s.Warnings...)
	return c, nil
}

func loadName(pt SummaryPoint) string {
	cell := ""
	if pt.Load.Workload != "" {
		cell = pt.Load.Workload + " "
	}
	if pt.Load.Concurrency > 0 {
		return fmt.Sprintf("%sc=%d", cell, pt.Load.Concurrency)
	}
	return fmt.Sprintf("%srate=%g/s", cell, pt.Load.Rate)
}

// pointWorkload turns a measured point into a workload: closed loops give
// their concurrency; open loops Little's law, rate x mean E2E.
func pointWorkload(pt SummaryPoint) (Workload, float64) {
	conc := float64(pt.Load.Concurrency)
	if conc == 0 {
		conc = pt.Load.Rate * pt.E2E.Mean / 1000
	}
	w := Workload{PromptTokens: max(1, int(math.Round(pt.PromptTokensMean))),
		OutputTokens: max(1, int(math.Round(pt.OutputTokensMean))), Concurrency: max(1, int(math.Ceil(conc)))}
	return w, conc
}

func comparePoint(s *Shape, o Options, d *Device, pt SummaryPoint) (ComparePoint, error) {
	w, conc := pointWorkload(pt)
	p, err := newPlanner(s, w, o)
	if err != nil {
		return ComparePoint{}, err
	}
	if why := p.unsupported(d); why != "" {
		return ComparePoint{}, errors.New(why)
	}
	dr := p.device(d)
	f := dr.Perf
	cp := ComparePoint{Load: loadName(pt), Concurrency: conc, PromptTokens: w.PromptTokens, OutputTokens: w.OutputTokens,
		Completed: pt.Requests.Completed, Failed: pt.Requests.Failed,
		TTFTP50: pair(pt.TTFT.P50/1000, f.TTFTP50S), TTFTP95: pair(pt.TTFT.P95/1000, f.TTFTP95S),
		TTFTBurst: pair(pt.TTFT.P95/1000, f.TTFTBurstS),
		TPOT:      pair(pt.TPOT.Mean/1000, f.TPOTS), DecodeTPS: pair(pt.DecodeTPS.P50, f.DecodeTPS), Bound: f.DecodeBound}
	// The plan's own closed-loop throughput: users x output / E2E with
	// the queue in the E2E, never above the batch's decode rate.
	cp.OutputTPS = pair(pt.OutputTPS, f.AggregateTPS)
	if pt.PeakMemoryBytes > 0 {
		pm := pair(pt.PeakMemoryBytes, float64(p.resident(d, dr.Budget)))
		cp.PeakMemory = &pm
	}
	cp.Limit, cp.Why = suggestLimit(p, dr, pt, cp)
	return cp, nil
}

// resident is what the engine holds once loaded: vLLM preallocates its
// whole budget; llama.cpp what it needs, without the headroom.
func (p *planner) resident(d *Device, b Budget) int64 {
	if p.eng.paged {
		return int64(float64(d.Usable()) * (1 - p.opt.Headroom))
	}
	return b.Total - b.Headroom
}

// suggestLimit reads which limit the measurement points to; the rules are
// documented in docs/PLANNER.md.
func suggestLimit(p *planner, dr DeviceResult, pt SummaryPoint, cp ComparePoint) (string, string) {
	dec, ttft := cp.DecodeTPS.Ratio, cp.TTFTP50.Ratio
	switch {
	case !dr.Fits || dr.Perf.Batch < int64(math.Ceil(cp.Concurrency)):
		return "memory capacity", fmt.Sprintf("only %d of %.0f sequences fit at once", dr.Perf.Batch, math.Ceil(cp.Concurrency))
	case pt.Queue.P50 > 0 && pt.E2E.P50 > 0 && pt.Queue.P50 > 0.2*pt.E2E.P50:
		return "memory capacity", fmt.Sprintf("requests queue (queue p50 %.0f ms of E2E p50 %.0f ms): slots or KV pool full", pt.Queue.P50, pt.E2E.P50)
	case dec > 0 && dec < 0.5:
		return "CPU", fmt.Sprintf("decode at %.0f%% of the roofline: host or engine overhead dominates", 100*dec)
	case ttft > 2 && cp.TTFTBurst.Ratio > 0.75 && cp.TTFTBurst.Ratio < 1.33:
		return dr.Perf.PrefillBound, fmt.Sprintf("TTFT p95 matches the burst estimate (%.2fx): users arrive together, as equal-length closed loops stay in lockstep, and queue for prefill", cp.TTFTBurst.Ratio)
	case ttft > 2 && (dec == 0 || dec >= 0.5):
		return dr.Perf.PrefillBound, fmt.Sprintf("TTFT %.1fx the prediction while decode holds: prefill (or prefill scheduling) is slow", ttft)
	case dec > 1.5:
		return dr.Perf.DecodeBound, fmt.Sprintf("decode %.1fx faster than predicted: check the device and efficiency assumptions", dec)
	}
	return dr.Perf.DecodeBound, "measurement within a factor of 2 of the roofline, whose largest term this is"
}
