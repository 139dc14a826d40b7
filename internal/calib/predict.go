package calib

import (
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/stats"
)

// Point is a load and workload to predict: a closed loop of Concurrency
// users sending Warmup unmeasured then Requests measured requests, as
// servebench run does.
type Point struct {
	Concurrency, PromptTokens, OutputTokens int
	Requests, Warmup                        int
}

// Unlimited stands for "no slot limit" and "no KV limit" in the simulator
// a fit configures: far above any load a run offers.
const Unlimited = 1 << 20

// Replicas is how many seeds a prediction pools: the step noise breaks
// the phase lock a closed loop of identical requests falls into, and the
// seeds average over where it lands.
const Replicas = 8

// maxJitter bounds the step noise a fit lends the simulator.
const maxJitter = 0.3

// SimConfig is the simulator configured with the fit: its step model and
// overhead, its slots (unlimited when the run did not bound them), no KV
// limit (a run shows no KV cache), and the step noise the run showed: its
// wander (Wander), and a uniform jitter with the rest of the residuals'
// robust spread (±√3 × √(r² − wander²), r the spread over the mean gap,
// at most ±30%; host stalls that move single gaps do not move the
// engine's schedule and are left out). Without the jitter a closed loop
// of identical requests locks into one phase, and a TTFT that waits for a
// step boundary or does not turns on a fraction of a millisecond.
func (f *Fit) SimConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Timer, cfg.TimeScale = f.Model.Timer(), 1
	if f.corrected() {
		cfg.Timer = Tabled{Fitted: f.Model.Timer(), Table: f.Table}
	}
	if f.Shared != nil {
		cfg.Timer = f.Shared.Timer()
	}
	cfg.Jitter, cfg.Wander, cfg.WanderTime = 0, 0, 0
	slow := 0.0
	if w := f.Wander; w != nil {
		cfg.Wander, cfg.WanderTime, slow = w.SD, w.TimeS, w.SD
	}
	if r := f.Residuals; r.MeanMS > 0 {
		rel := r.SpreadMS / r.MeanMS
		cfg.Jitter = math.Min(maxJitter, math.Sqrt(3)*math.Sqrt(math.Max(0, rel*rel-slow*slow)))
	}
	cfg.Engine.MaxNumSeqs = Unlimited
	if f.Slots > 0 {
		cfg.Engine.MaxNumSeqs = f.Slots
	}
	cfg.Engine.OverheadIn = f.OverheadIn
	cfg.Engine.KVTokens = Unlimited * 64
	cfg.Model.MaxModelLen = Unlimited
	return cfg
}

// corrected says the step table changes the model somewhere.
func (f *Fit) corrected() bool {
	for _, t := range f.Table {
		if t.CorrectionMS != 0 {
			return true
		}
	}
	return false
}

// Predict runs each point through the simulator's scheduler with the
// fitted model, Replicas times with seeds 1, 2, ..., and reports what a
// run of them all would summarise: the seeds are fixed, so the same fit
// predicts the same figures. Each simulated request becomes a record and
// the records are summarised by metrics, as a measured run's are, so that
// a prediction and a measurement are two outputs of one function
// (Figures).
func Predict(cfg sim.Config, pts []Point) ([]plan.Prediction, error) {
	out := make([]plan.Prediction, 0, len(pts))
	for _, p := range pts {
		if p.Concurrency < 1 || p.PromptTokens < 1 || p.OutputTokens < 1 || p.Requests < 1 || p.Warmup < 0 {
			return nil, fmt.Errorf("predicting %+v: concurrency, lengths and requests must be positive", p)
		}
		reqs := p.requests()
		var runs [][]sim.Outcome
		for seed := range int64(Replicas) {
			c := cfg
			c.Seed = seed + 1
			outs, _, err := sim.SimulateClosed(c, p.Concurrency, reqs)
			if err != nil {
				return nil, fmt.Errorf("predicting concurrency %d: %w", p.Concurrency, err)
			}
			runs = append(runs, outs)
		}
		out = append(out, summarize(p, runs))
	}
	return out, nil
}

// requests are the point's warm-up and measured requests for a closed
// loop. Users who send together are a microsecond apart, as a real
// client's are: an idle engine starts on the first one ready.
func (p Point) requests() []sim.Request {
	reqs := make([]sim.Request, p.Warmup+p.Requests)
	for i := range reqs {
		reqs[i] = sim.Request{Arrival: time.Duration(i%p.Concurrency) * time.Microsecond,
			PromptTokens: p.PromptTokens, OutputTokens: p.OutputTokens}
	}
	return reqs
}

// record is the i-th simulated request of the point as a run would have
// recorded it, in model time: the first Warmup requests are warm-ups, as
// servebench run sends them. The simulator streams one token a step, so
// the record has no chunk counts (its first chunk holds one token).
func (p Point) record(i int, o sim.Outcome) *record.Record {
	sent := int64(o.Arrival)
	r := &record.Record{Load: record.Load{Concurrency: p.Concurrency}, ID: int64(i), Phase: record.PhaseMeasured,
		PromptTokensRequested: p.PromptTokens, OutputTokensRequested: p.OutputTokens,
		PromptTokens: o.PromptTokens, OutputTokens: o.Tokens, ScheduledNS: sent, SentNS: sent, EndNS: sent + int64(o.E2E)}
	if i < p.Warmup {
		r.Phase = record.PhaseWarmup
	}
	if o.Tokens > 0 {
		r.FirstTokenNS = sent + int64(o.TTFT)
	}
	if o.Err != nil {
		r.Error = &record.Error{Class: record.ClassServerError, Message: o.Err.Error()}
	}
	return r
}

// Figures is a summarised point in the terms predictions are made and
// compared in (docs/PLANNER.md, Calibration): its TTFT p50, per-request
// decode speed p50 and output tokens/s, as docs/METRICS.md defines them,
// for the load p. A measured point and a predicted one go through it
// alike; a figure the point lacks is NaN.
func Figures(s metrics.PointSummary, p Point) plan.Prediction {
	get := func(v float64, _ bool) float64 { return v }
	return plan.Prediction{Concurrency: p.Concurrency, PromptTokens: p.PromptTokens, OutputTokens: p.OutputTokens,
		TTFTP50MS: get(s.TTFT.Get("p50")), DecodeTPS: get(s.DecodeTPSReq.Get("p50")), OutputTPS: s.OutputTPS}
}

// summarize is the point's figures over every replica (runs) pooled:
// each simulated request a record, summarised by metrics as a run's
// records are. TTFT and decode speed are the medians over all replicas'
// requests, output tokens/s the mean of the replicas' own (each over its
// window from the first send to the last end: pooled replicas overlap in
// model time). Each replica is a run of the point's requests, so the
// spread of their own figures (sample sd over mean) is how much one run
// differs from another on the fitted server.
func summarize(p Point, runs [][]sim.Outcome) plan.Prediction {
	var pooled metrics.Aggregator
	pred := plan.Prediction{}
	var each [3][]float64 // each replica's TTFT p50, decode p50, output tok/s
	for _, outs := range runs {
		var one metrics.Aggregator
		for i, o := range outs {
			r := p.record(i, o)
			one.Add(r)
			pooled.Add(r)
		}
		s, _ := one.Point(0)
		f := Figures(s, p)
		pred.OutputTPS += f.OutputTPS / float64(len(runs))
		for k, v := range []float64{f.TTFTP50MS, f.DecodeTPS, f.OutputTPS} {
			if v > 0 {
				each[k] = append(each[k], v)
			}
		}
	}
	all, _ := pooled.Point(0)
	tps := pred.OutputTPS
	pred = Figures(all, p)
	pred.OutputTPS = tps
	pred.Spread = &plan.Ratios{TTFT: stats.RelStdDev(each[0]), DecodeTPS: stats.RelStdDev(each[1]), OutputTPS: stats.RelStdDev(each[2])}
	return pred
}
