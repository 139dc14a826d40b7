package cli

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/stats"
)

// calibrationReport is plan --calibrate's output (docs/PLANNER.md,
// Calibration; --json writes it as is).
type calibrationReport struct {
	Schema string `json:"schema"`
	Run    string `json:"run"`
	// FitConcurrency lists the run's concurrencies the fit read
	// (--fit-concurrency); absent, it read every point.
	FitConcurrency []int      `json:"fit_concurrency,omitempty"`
	Fit            *calib.Fit `json:"fit"`
	// Measured sets each closed-loop point of the run beside what the
	// fitted model predicts for it: the fit's residuals at the level of a
	// summary.
	Measured []measuredPoint `json:"measured"`
	// AgainstRun and Against are the same for a held-out run (--against):
	// its closed-loop points, measured there and predicted by this fit.
	AgainstRun string          `json:"against_run,omitempty"`
	Against    []measuredPoint `json:"against,omitempty"`
	// AgainstSteps sets the held-out run's decode steps beside the fit
	// run's at each batch size both saw: the server's own change between
	// the runs, which no fit can predict.
	AgainstSteps []calib.StepChange `json:"against_steps,omitempty"`
	// AgainstRepeats are the held-out run's loads measured more than once
	// (the same concurrency and lengths listed again): the prediction set
	// against their mean, beside the server's own spread over them.
	AgainstRepeats []repeatedLoad    `json:"against_repeats,omitempty"`
	Predictions    []plan.Prediction `json:"predictions"`
	// Warnings are the comparison's (the fit's own are in fit.warnings).
	Warnings []string `json:"warnings,omitempty"`
}

// measuredPoint is one of the run's points, measured and predicted, with
// predicted/measured − 1 for each figure.
type measuredPoint struct {
	// Load is the point's load as the run set it ("c=8", or "in=128
	// out=64 c=8" in a workload matrix): points of one load are one load
	// measured again, whatever their lengths' means round to.
	Load      string          `json:"load"`
	Measured  plan.Prediction `json:"measured"`
	Predicted plan.Prediction `json:"predicted"`
	Errors    plan.Ratios     `json:"errors"`
}

// repeatedLoad is one load a held-out run measured several times: the
// mean of each figure over its runs, their spread (sample standard
// deviation over the mean), the prediction and predicted/mean − 1. An
// error within two standard errors of the mean (spread/√runs) cannot be
// told from the server's own spread.
type repeatedLoad struct {
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
func repeatedLoads(pts []measuredPoint) []repeatedLoad {
	groups := map[string][]measuredPoint{}
	var order []string
	for _, m := range pts {
		if groups[m.Load] == nil {
			order = append(order, m.Load)
		}
		groups[m.Load] = append(groups[m.Load], m)
	}
	var out []repeatedLoad
	for _, load := range order {
		g := groups[load]
		if len(g) < 2 {
			continue
		}
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
		r := repeatedLoad{Load: load, Concurrency: k.c, PromptTokens: k.p, OutputTokens: k.o, Runs: len(g)}
		r.Mean = plan.Prediction{Concurrency: k.c, PromptTokens: k.p, OutputTokens: k.o}
		r.Predicted = r.Mean
		r.Mean.TTFTP50MS, r.Spread.TTFT, r.Predicted.TTFTP50MS = figure(func(p plan.Prediction) float64 { return p.TTFTP50MS })
		r.Mean.DecodeTPS, r.Spread.DecodeTPS, r.Predicted.DecodeTPS = figure(func(p plan.Prediction) float64 { return p.DecodeTPS })
		r.Mean.OutputTPS, r.Spread.OutputTPS, r.Predicted.OutputTPS = figure(func(p plan.Prediction) float64 { return p.OutputTPS })
		r.Errors = errorsOf(r.Predicted, r.Mean)
		out = append(out, r)
	}
	return out
}

// withinSpread says an error is within two standard errors of a mean of
// runs whose spread (sd over mean) is spread.
func withinSpread(err, spread float64, runs int) bool {
	return math.Abs(err) <= 2*spread/math.Sqrt(float64(runs))
}

// lists parses the lists of loads and lengths to predict; an absent list
// is nil.
func (f *calibrateFlags) lists() (conc, prompts, outputs []int, err error) {
	for _, l := range []struct {
		name, s string
		dst     *[]int
	}{{"concurrency", f.conc, &conc}, {"prompt-tokens", f.prompt, &prompts}, {"output-tokens", f.output, &outputs}} {
		if l.s == "" {
			continue
		}
		if *l.dst, err = intList(l.name, l.s); err != nil {
			return nil, nil, nil, err
		}
	}
	return conc, prompts, outputs, nil
}

// points are the loads to predict: the lists crossed, each length
// defaulting to the run's mean and the request counts to the run's.
func (f *calibrateFlags) points(sum *metrics.Summary, conc, prompts, outputs []int) ([]calib.Point, error) {
	own := ownPoints(sum)
	if len(own) == 0 {
		return nil, &Error{Err: fmt.Errorf("--calibrate %s: the run has no closed-loop point (--concurrency) to fit to", f.dir), Hint: "servebench run --concurrency 1,4 --out DIR", Code: ExitFailure}
	}
	base := own[0]
	for _, p := range own {
		base.Requests, base.Warmup = max(base.Requests, p.Requests), max(base.Warmup, p.Warmup)
	}
	if f.requests > 0 {
		base.Requests = f.requests
	}
	if f.warmup >= 0 {
		base.Warmup = f.warmup
	}
	if conc == nil && prompts == nil && outputs == nil {
		return own, nil
	}
	or := func(l []int, def int) []int {
		if l == nil {
			return []int{def}
		}
		return l
	}
	var pts []calib.Point
	for _, c := range or(conc, base.Concurrency) {
		for _, p := range or(prompts, base.PromptTokens) {
			for _, o := range or(outputs, base.OutputTokens) {
				pts = append(pts, calib.Point{Concurrency: c, PromptTokens: p, OutputTokens: o, Requests: base.Requests, Warmup: base.Warmup})
			}
		}
	}
	return pts, nil
}

// ownPoints are the run's closed-loop points as predictable loads.
func ownPoints(sum *metrics.Summary) []calib.Point {
	var pts []calib.Point
	for _, p := range sum.Points {
		if p.Load.Concurrency < 1 || p.Requests.Completed < 1 {
			continue
		}
		warm := 0
		if p.Warmup != nil {
			warm = p.Warmup.Count
		}
		pts = append(pts, calib.Point{Concurrency: p.Load.Concurrency, PromptTokens: int(math.Round(p.PromptTokensMean)),
			OutputTokens: int(math.Round(p.OutputTokensMean)), Requests: p.Requests.Completed + p.Requests.Failed, Warmup: warm})
	}
	return pts
}

// fitExample is a --fit-concurrency for the run: its two lowest
// concurrencies.
func fitExample(sum *metrics.Summary) string {
	var cs []int
	for _, p := range ownPoints(sum) {
		if !slices.Contains(cs, p.Concurrency) {
			cs = append(cs, p.Concurrency)
		}
	}
	slices.Sort(cs)
	return intsText(cs[:min(2, len(cs))])
}

// heldOut is a run of the same server that the fit is checked against.
type heldOut struct {
	dir     string
	sameRun bool // the run the fit read: its points the fit left out, or all of them
	summary *metrics.Summary
	records []*record.Record
}

// report predicts the run's own points, a held-out run's (against, when
// set) and pts.
func (c *calibration) report(pts []calib.Point, against *heldOut) (*calibrationReport, error) {
	cfg := c.fit.SimConfig()
	rep := &calibrationReport{Schema: calib.Schema, Run: c.dir, Fit: c.fit}
	if c.only != nil {
		rep.FitConcurrency = slices.Sorted(maps.Keys(c.only))
	}
	var err error
	if rep.Measured, err = comparePoints(cfg, c.summary); err != nil {
		return nil, err
	}
	if against != nil {
		rep.AgainstRun = against.dir
		if rep.Against, err = comparePoints(cfg, against.summary); err != nil {
			return nil, err
		}
		rep.AgainstRepeats = repeatedLoads(rep.Against)
		rep.AgainstSteps = c.fit.StepChanges(against.records)
		rep.Warnings = calib.DriftWarnings(rep.AgainstSteps, against.dir, against.sameRun)
		if against.sameRun && c.only == nil { // every point fitted: none held out
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("--against %s is the run the fit read: its points are not held out, and matching them says only that the model reproduces its own data; give --fit-concurrency (e.g. %s) to fit to some points and hold out the others", against.dir, fitExample(c.summary)))
		}
	}
	if rep.Predictions, err = calib.Predict(cfg, pts); err != nil {
		return nil, err
	}
	return rep, nil
}

// comparePoints predicts each closed-loop point of a run, with its
// lengths and request counts, and sets the measurement beside it.
func comparePoints(cfg sim.Config, sum *metrics.Summary) ([]measuredPoint, error) {
	own := ownPoints(sum)
	pred, err := calib.Predict(cfg, own)
	if err != nil {
		return nil, err
	}
	var out []measuredPoint
	i := 0
	for _, p := range sum.Points {
		if p.Load.Concurrency < 1 || p.Requests.Completed < 1 {
			continue
		}
		m := measuredOf(p, own[i])
		out = append(out, measuredPoint{Load: p.Load.Label(), Measured: m, Predicted: pred[i], Errors: errorsOf(pred[i], m)})
		i++
	}
	return out, nil
}

// measuredOf is a point's summary in a prediction's terms.
func measuredOf(p metrics.PointSummary, own calib.Point) plan.Prediction {
	get := func(v float64, _ bool) float64 { return v }
	return plan.Prediction{Concurrency: own.Concurrency, PromptTokens: own.PromptTokens, OutputTokens: own.OutputTokens,
		TTFTP50MS: get(p.TTFT.Get("p50")), DecodeTPS: get(p.DecodeTPSReq.Get("p50")), OutputTPS: p.OutputTPS}
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
