package calib

import (
	"fmt"
	"math"
	"slices"

	"github.com/servebench/servebench/internal/plan"
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

// SimConfig is the simulator configured with the fit: its step model and
// overhead, its slots (unlimited when the run did not bound them), no KV
// limit (a run shows no KV cache), and no jitter so predictions repeat.
func (f *Fit) SimConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Timer, cfg.Jitter, cfg.TimeScale = f.Model.Timer(), 0, 1
	cfg.Engine.MaxNumSeqs = Unlimited
	if f.Slots > 0 {
		cfg.Engine.MaxNumSeqs = f.Slots
	}
	cfg.Engine.KVTokens = Unlimited * 64
	cfg.Model.MaxModelLen = Unlimited
	return cfg
}

// Predict runs each point through the simulator's scheduler with the
// fitted model and reports what a run would summarise.
func Predict(cfg sim.Config, pts []Point) ([]plan.Prediction, error) {
	out := make([]plan.Prediction, 0, len(pts))
	for _, p := range pts {
		if p.Concurrency < 1 || p.PromptTokens < 1 || p.OutputTokens < 1 || p.Requests < 1 || p.Warmup < 0 {
			return nil, fmt.Errorf("predicting %+v: concurrency, lengths and requests must be positive", p)
		}
		reqs := make([]sim.Request, p.Warmup+p.Requests)
		for i := range reqs {
			reqs[i] = sim.Request{PromptTokens: p.PromptTokens, OutputTokens: p.OutputTokens}
		}
		outs, _, err := sim.SimulateClosed(cfg, p.Concurrency, reqs)
		if err != nil {
			return nil, fmt.Errorf("predicting concurrency %d: %w", p.Concurrency, err)
		}
		out = append(out, summarize(p, outs[p.Warmup:]))
	}
	return out, nil
}

// summarize computes a point's figures as docs/METRICS.md defines them:
// medians of TTFT and per-request decode speed, and output tokens over
// the window from the first send to the last end.
func summarize(p Point, outs []sim.Outcome) plan.Prediction {
	var ttft, speed []float64
	var tokens float64
	start, end := math.Inf(1), math.Inf(-1)
	for _, o := range outs {
		if o.Err != nil {
			continue
		}
		ttft = append(ttft, o.TTFT.Seconds()*1e3)
		if o.Tokens > 1 && o.E2E > o.TTFT {
			speed = append(speed, float64(o.Tokens-1)/(o.E2E-o.TTFT).Seconds())
		}
		tokens += float64(o.Tokens)
		start, end = math.Min(start, o.Arrival.Seconds()), math.Max(end, (o.Arrival+o.E2E).Seconds())
	}
	slices.Sort(ttft)
	slices.Sort(speed)
	pr := plan.Prediction{Concurrency: p.Concurrency, PromptTokens: p.PromptTokens, OutputTokens: p.OutputTokens,
		TTFTP50MS: stats.Quantile(ttft, 0.5), DecodeTPS: stats.Quantile(speed, 0.5)}
	if end > start {
		pr.OutputTPS = tokens / (end - start)
	}
	return pr
}
