package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

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
	Schema string     `json:"schema"`
	Run    string     `json:"run"`
	Fit    *calib.Fit `json:"fit"`
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
	Measured  plan.Prediction `json:"measured"`
	Predicted plan.Prediction `json:"predicted"`
	Errors    pointErrors     `json:"errors"`
}

type pointErrors struct {
	TTFT      float64 `json:"ttft_p50"`
	DecodeTPS float64 `json:"decode_tps_per_request"`
	OutputTPS float64 `json:"output_tps"`
}

// repeatedLoad is one load a held-out run measured several times: the
// mean of each figure over its runs, their spread (sample standard
// deviation over the mean), the prediction and predicted/mean − 1. An
// error within two standard errors of the mean (spread/√runs) cannot be
// told from the server's own spread.
type repeatedLoad struct {
	Concurrency  int             `json:"concurrency"`
	PromptTokens int             `json:"prompt_tokens"`
	OutputTokens int             `json:"output_tokens"`
	Runs         int             `json:"runs"`
	Mean         plan.Prediction `json:"mean"`
	Spread       pointErrors     `json:"spread"`
	Predicted    plan.Prediction `json:"predicted"`
	Errors       pointErrors     `json:"errors"`
}

// repeatedLoads groups the points measured at the same load and lengths,
// in the order each load first appears; a load measured once is left out.
func repeatedLoads(pts []measuredPoint) []repeatedLoad {
	type load struct{ c, p, o int }
	groups := map[load][]measuredPoint{}
	var order []load
	for _, m := range pts {
		k := load{m.Measured.Concurrency, m.Measured.PromptTokens, m.Measured.OutputTokens}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], m)
	}
	var out []repeatedLoad
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		figure := func(get func(plan.Prediction) float64) (meas, spread, pred float64) {
			xs := make([]float64, len(g))
			for i, m := range g {
				xs[i] = get(m.Measured)
				pred += get(m.Predicted) / float64(len(g))
			}
			meas = stats.Mean(xs)
			if meas > 0 {
				spread = stats.StdDev(xs) / meas
			}
			return meas, spread, pred
		}
		r := repeatedLoad{Concurrency: k.c, PromptTokens: k.p, OutputTokens: k.o, Runs: len(g)}
		r.Mean = plan.Prediction{Concurrency: k.c, PromptTokens: k.p, OutputTokens: k.o}
		r.Predicted = r.Mean
		r.Mean.TTFTP50MS, r.Spread.TTFT, r.Predicted.TTFTP50MS = figure(func(p plan.Prediction) float64 { return p.TTFTP50MS })
		r.Mean.DecodeTPS, r.Spread.DecodeTPS, r.Predicted.DecodeTPS = figure(func(p plan.Prediction) float64 { return p.DecodeTPS })
		r.Mean.OutputTPS, r.Spread.OutputTPS, r.Predicted.OutputTPS = figure(func(p plan.Prediction) float64 { return p.OutputTPS })
		r.Errors = pointErrors{TTFT: relErr(r.Predicted.TTFTP50MS, r.Mean.TTFTP50MS),
			DecodeTPS: relErr(r.Predicted.DecodeTPS, r.Mean.DecodeTPS), OutputTPS: relErr(r.Predicted.OutputTPS, r.Mean.OutputTPS)}
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

// heldOut is a run of the same server that the fit is checked against.
type heldOut struct {
	dir     string
	summary *metrics.Summary
	records []*record.Record
}

// report predicts the run's own points, a held-out run's (against, when
// set) and pts.
func (c *calibration) report(pts []calib.Point, against *heldOut) (*calibrationReport, error) {
	cfg := c.fit.SimConfig()
	rep := &calibrationReport{Schema: calib.Schema, Run: c.dir, Fit: c.fit}
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
		rep.Warnings = calib.DriftWarnings(rep.AgainstSteps, against.dir)
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
		out = append(out, measuredPoint{Measured: m, Predicted: pred[i], Errors: pointErrors{
			TTFT: relErr(pred[i].TTFTP50MS, m.TTFTP50MS), DecodeTPS: relErr(pred[i].DecodeTPS, m.DecodeTPS),
			OutputTPS: relErr(pred[i].OutputTPS, m.OutputTPS)}})
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

// relErr is predicted/measured − 1, 0 when nothing was measured.
func relErr(pred, meas float64) float64 {
	if !(meas > 0) || math.IsNaN(pred) {
		return 0
	}
	return pred/meas - 1
}

// writeParams prints fitted values with their intervals; an unstable one
// (its estimate outside its resamples' interval) says so.
func writeParams(tw io.Writer, ps []calib.Param) {
	for _, p := range ps {
		mark := ""
		if p.Unstable {
			mark = "\tunstable: interval widened to the estimate"
		}
		fmt.Fprintf(tw, "  %s\t%.4g %s\t[%.4g, %.4g]\tse %.2g%s\n", p.Name, p.Value, p.Unit, p.Low, p.High, p.SE, mark)
	}
}

// writeCalibration prints the fit, its residuals and the predictions.
func writeCalibration(w io.Writer, r *calibrationReport) error {
	f := r.Fit
	fmt.Fprintf(w, "Calibration of %s: %d requests, %d inter-token gaps, %d sent alone\n\n", r.Run, f.Requests, f.Gaps, f.LoneRequests)
	fmt.Fprintf(w, "Fitted model (95%% bootstrap intervals, requests resampled):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeParams(tw, f.Params)
	slots := "no limit seen"
	if f.Slots > 0 {
		slots = fmt.Sprint(f.Slots)
	}
	fmt.Fprintf(tw, "  slots\t%s (%s)\t\t\n", slots, f.SlotsSource)
	where := "before it queues for a slot"
	if f.OverheadIn == sim.OverheadInSlot {
		where = "holding a slot (the server takes a slot, then forwards the request)"
	}
	fmt.Fprintf(tw, "  request overhead\tspent %s\t\t\n", where)
	tw.Flush()
	writeShared(w, f.Shared)
	res := f.Residuals
	fmt.Fprintf(w, "\nResiduals: gap RMS %.3g ms, robust spread %.3g ms (mean gap %.3g ms); lone-request TTFT RMS %.3g ms\n",
		res.RMSMS, res.SpreadMS, res.MeanMS, res.TTFTRMS)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  sequences\tgaps\tmeasured ms\tfitted ms\t\n")
	for _, s := range res.BySeqs {
		fmt.Fprintf(tw, "  %d\t%d\t%.3f\t%.3f\t\n", s.Seqs, s.Gaps, s.Measured, s.Fitted)
	}
	tw.Flush()
	writeTable(w, f.Table)
	writeCompared(w, "The run's points", r.Measured)
	if r.AgainstRun != "" {
		writeCompared(w, "Held-out run "+r.AgainstRun, r.Against)
		writeRepeats(w, r.AgainstRepeats)
		writeSteps(w, r.AgainstSteps)
	}
	writePredictions(w, r.Predictions)
	for _, s := range append(slices.Clip(f.Warnings), r.Warnings...) {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	return nil
}

// writeRepeats prints the held-out loads measured more than once.
func writeRepeats(w io.Writer, rs []repeatedLoad) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nHeld-out loads measured more than once: mean ±spread (sd/mean) / predicted (predicted/mean - 1; ~: within two standard errors of the mean, the server's own spread):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  users\truns\tTTFT p50 ms\t\tdecode tok/s/user\t\toutput tok/s\t\t\n")
	cell := func(mean, spread, pred, err float64, runs int) string {
		mark := ""
		if withinSpread(err, spread, runs) {
			mark = "~"
		}
		return fmt.Sprintf("%.1f ±%.1f%% / %.1f\t%+.1f%%%s", mean, 100*spread, pred, 100*err, mark)
	}
	for _, r := range rs {
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t\n", r.Concurrency, r.Runs,
			cell(r.Mean.TTFTP50MS, r.Spread.TTFT, r.Predicted.TTFTP50MS, r.Errors.TTFT, r.Runs),
			cell(r.Mean.DecodeTPS, r.Spread.DecodeTPS, r.Predicted.DecodeTPS, r.Errors.DecodeTPS, r.Runs),
			cell(r.Mean.OutputTPS, r.Spread.OutputTPS, r.Predicted.OutputTPS, r.Errors.OutputTPS, r.Runs))
	}
	tw.Flush()
}

// writeSteps prints the server's decode steps in the fit's run and the
// held-out run, side by side.
func writeSteps(w io.Writer, steps []calib.StepChange) {
	if len(steps) == 0 {
		return
	}
	fmt.Fprintf(w, "\nThe server's own decode steps, fit run / held-out point (median of decode-only steps; share: of the point's; the server's change):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  point\tsequences\tgaps\tshare\tms\tchange\t\n")
	for _, c := range steps {
		fmt.Fprintf(tw, "  %s\t%d\t%d / %d\t%.0f%%\t%.3f / %.3f\t%+.1f%%\t\n", c.Point, c.Seqs, c.FitGaps, c.OtherGaps, 100*c.Share, c.FitMS, c.OtherMS, 100*c.Change)
	}
	tw.Flush()
}

// writeTable prints the measured decode steps and the corrections the
// predictions make with them.
func writeTable(w io.Writer, tab []calib.TableStep) {
	if len(tab) == 0 {
		return
	}
	fmt.Fprintf(w, "\nDecode steps by batch size (median; a correction where it is beyond 2 se of 0):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  sequences\tgaps\tmedian ms\tcorrection ms\tse ms\t\n")
	for _, t := range tab {
		fmt.Fprintf(tw, "  %d\t%d\t%.3f\t%+.3f\t%.3f\t\n", t.Seqs, t.Gaps, t.MedianMS, t.CorrectionMS, t.SEMS)
	}
	tw.Flush()
}

// writeCompared prints measured beside predicted, point by point.
func writeCompared(w io.Writer, title string, pts []measuredPoint) {
	fmt.Fprintf(w, "\n%s, measured / predicted (predicted/measured - 1):\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  users\tTTFT p50 ms\t\tdecode tok/s/user\t\toutput tok/s\t\t\n")
	for _, m := range pts {
		fmt.Fprintf(tw, "  %d\t%.1f / %.1f\t%+.1f%%\t%.1f / %.1f\t%+.1f%%\t%.1f / %.1f\t%+.1f%%\t\n", m.Measured.Concurrency,
			m.Measured.TTFTP50MS, m.Predicted.TTFTP50MS, 100*m.Errors.TTFT, m.Measured.DecodeTPS, m.Predicted.DecodeTPS,
			100*m.Errors.DecodeTPS, m.Measured.OutputTPS, m.Predicted.OutputTPS, 100*m.Errors.OutputTPS)
	}
	tw.Flush()
}

func writePredictions(w io.Writer, preds []plan.Prediction) {
	fmt.Fprintf(w, "\nPredicted:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  users\tprompt\toutput\tTTFT p50 ms\tdecode tok/s/user\toutput tok/s\t\n")
	for _, p := range preds {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%.1f\t%.1f\t%.1f\t\n", p.Concurrency, p.PromptTokens, p.OutputTokens, p.TTFTP50MS, p.DecodeTPS, p.OutputTPS)
	}
	tw.Flush()
	fmt.Fprintln(w)
}
