package calib

import (
	"math"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/stats"
)

// Report is a calibration's output (docs/PLANNER.md, Calibration; its
// JSON is servebench.calibration/v1): the fit, the run's points and a
// held-out run's measured beside their predictions, and the predictions
// asked for.
type Report struct {
	Schema string `json:"schema"`
	Run    string `json:"run"`
	// FitConcurrency lists the run's concurrencies the fit read
	// (--fit-concurrency); absent, it read every point.
	FitConcurrency []int `json:"fit_concurrency,omitempty"`
	Fit            *Fit  `json:"fit"`
	// Measured sets each closed-loop point of the run beside what the
	// fitted model predicts for it: the fit's residuals at the level of a
	// summary.
	Measured []MeasuredPoint `json:"measured"`
	// AgainstRun and Against are the same for a held-out run (--against):
	// its closed-loop points, measured there and predicted by this fit.
	AgainstRun string          `json:"against_run,omitempty"`
	Against    []MeasuredPoint `json:"against,omitempty"`
	// AgainstSteps sets the held-out run's decode steps beside the fit
	// run's at each batch size both saw: the server's own change between
	// the runs, which no fit can predict.
	AgainstSteps []StepChange `json:"against_steps,omitempty"`
	// AgainstRepeats are the held-out run's loads measured more than once
	// (the same concurrency and lengths listed again): the prediction set
	// against their mean, beside the server's own spread over them.
	AgainstRepeats []RepeatedLoad    `json:"against_repeats,omitempty"`
	Predictions    []plan.Prediction `json:"predictions"`
	// Warnings are the comparison's (the fit's own are in fit.warnings).
	Warnings []string `json:"warnings,omitempty"`
}

// MeasuredPoint is one of a run's points, measured and predicted, with
// predicted/measured − 1 for each figure.
type MeasuredPoint struct {
	// Load is the point's load as the run set it ("c=8", or "in=128
	// out=64 c=8" in a workload matrix): points of one load are one load
	// measured again, whatever their lengths' means round to.
	Load      string          `json:"load"`
	Measured  plan.Prediction `json:"measured"`
	Predicted plan.Prediction `json:"predicted"`
	Errors    plan.Ratios     `json:"errors"`
}

// RepeatedLoad is one load a held-out run measured several times: the
// mean of each figure over its runs, their spread (sample standard
// deviation over the mean), the prediction and predicted/mean − 1. An
// error within two standard errors of the mean (spread/√runs) cannot be
// told from the server's own spread (WithinSpread).
type RepeatedLoad struct {
	Load         string          `json:"load"`
	Concurrency  int             `json:"concurrency"`
	PromptTokens int             `json:"prompt_tokens"`
	OutputTokens int             `json:"output_tokens"`
	Runs         int             `json:"runs"`
	Mean         plan.Prediction `json:"mean"`
	Spread       plan.Ratios     `json:"spread"`
	Predicted    plan.Prediction `json:"predicted"`
	Errors       plan.Ratios     `json:"errors"`
}

// repeatedLoads groups the points of the same load (as the run set it),
// in the order each load first appears; a load measured once is left out.
// A group's lengths are the means of its points'.
func repeatedLoads(pts []MeasuredPoint) []RepeatedLoad {
	groups := map[string][]MeasuredPoint{}
	var order []string
	for _, m := range pts {
		if groups[m.Load] == nil {
			order = append(order, m.Load)
		}
		groups[m.Load] = append(groups[m.Load], m)
	}
	var out []RepeatedLoad
	for _, load := range order {
		if g := groups[load]; len(g) >= 2 {
			out = append(out, repeatedLoad(load, g))
		}
	}
	return out
}

// repeatedLoad is the points g of one load, measured more than once.
func repeatedLoad(load string, g []MeasuredPoint) RepeatedLoad {
	var prompt, output float64
	for _, m := range g {
		prompt += float64(m.Measured.PromptTokens) / float64(len(g))
		output += float64(m.Measured.OutputTokens) / float64(len(g))
	}
	k := struct{ c, p, o int }{g[0].Measured.Concurrency, int(math.Round(prompt)), int(math.Round(output))}
	figure := func(get func(plan.Prediction) float64) (meas, spread, pred float64) {
		xs := make([]float64, len(g))
		for i, m := range g {
			xs[i] = get(m.Measured)
			pred += get(m.Predicted) / float64(len(g))
		}
		return stats.Mean(xs), stats.RelStdDev(xs), pred
	}
	r := RepeatedLoad{Load: load, Concurrency: k.c, PromptTokens: k.p, OutputTokens: k.o, Runs: len(g)}
	r.Mean = plan.Prediction{Concurrency: k.c, PromptTokens: k.p, OutputTokens: k.o}
	r.Predicted = r.Mean
	r.Mean.TTFTP50MS, r.Spread.TTFT, r.Predicted.TTFTP50MS = figure(func(p plan.Prediction) float64 { return p.TTFTP50MS })
	r.Mean.DecodeTPS, r.Spread.DecodeTPS, r.Predicted.DecodeTPS = figure(func(p plan.Prediction) float64 { return p.DecodeTPS })
	r.Mean.OutputTPS, r.Spread.OutputTPS, r.Predicted.OutputTPS = figure(func(p plan.Prediction) float64 { return p.OutputTPS })
	r.Errors = errorsOf(r.Predicted, r.Mean)
	return r
}

// WithinSpread says an error is within two standard errors of a mean of
// runs whose spread (sd over mean) is spread.
func WithinSpread(err, spread float64, runs int) bool {
	return math.Abs(err) <= 2*spread/math.Sqrt(float64(runs))
}

// comparePoints predicts each closed-loop point of a run, with its
// lengths and request counts, and sets the measurement beside it: both
// read off a summary by Figures.
func comparePoints(cfg sim.Config, sum *metrics.Summary) ([]MeasuredPoint, error) {
	own := ownPoints(sum)
	pred, err := Predict(cfg, own)
	if err != nil {
		return nil, err
	}
	var out []MeasuredPoint
	i := 0
	for _, p := range sum.Points {
		if p.Load.Concurrency < 1 || p.Requests.Completed < 1 {
			continue
		}
		m := Figures(p, own[i])
		out = append(out, MeasuredPoint{Load: p.Load.Label(), Measured: m, Predicted: pred[i], Errors: errorsOf(pred[i], m)})
		i++
	}
	return out, nil
}

// errorsOf is each figure's predicted/measured − 1 (relErr).
func errorsOf(pred, meas plan.Prediction) plan.Ratios {
	return plan.Ratios{TTFT: relErr(pred.TTFTP50MS, meas.TTFTP50MS), DecodeTPS: relErr(pred.DecodeTPS, meas.DecodeTPS),
		OutputTPS: relErr(pred.OutputTPS, meas.OutputTPS)}
}

// relErr is predicted/measured − 1, 0 when nothing was measured.
func relErr(pred, meas float64) float64 {
	if !(meas > 0) || math.IsNaN(pred) {
		return 0
	}
	return pred/meas - 1
}
