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
	Predictions  []plan.Prediction  `json:"predictions"`
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
		writeSteps(w, r.AgainstSteps)
	}
	writePredictions(w, r.Predictions)
	for _, s := range append(slices.Clip(f.Warnings), r.Warnings...) {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	return nil
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
