package report

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/sim"
)

// The calibration report as text (servebench calibrate without --json).

// writeCalibParams prints fitted values with their intervals; an unstable one
// (its estimate outside its resamples' interval) says so.
func writeCalibParams(tw io.Writer, ps []calib.Param) {
	for _, p := range ps {
		mark := ""
		if p.Unstable {
			mark = "\tunstable: interval widened to the estimate"
		}
		fmt.Fprintf(tw, "  %s\t%.4g %s\t[%.4g, %.4g]\tse %.2g%s\n", p.Name, p.Value, p.Unit, p.Low, p.High, p.SE, mark)
	}
}

// WriteCalibration prints the fit, its residuals and the predictions.
func WriteCalibration(w io.Writer, r *calib.Report) error {
	f := r.Fit
	of := r.Run
	if r.FitConcurrency != nil {
		of = fmt.Sprintf("%s at concurrency %s", r.Run, calib.ListText(r.FitConcurrency))
	}
	fmt.Fprintf(w, "Calibration of %s: %d requests, %d inter-token gaps, %d sent alone\n\n", of, f.Requests, f.Gaps, f.LoneRequests)
	fmt.Fprintf(w, "Fitted model (95%% bootstrap intervals, requests resampled):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeCalibParams(tw, f.Params)
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
	writeCalibShared(w, f.Shared)
	res := f.Residuals
	tw = calibTable(w, fmt.Sprintf("\nResiduals: gap RMS %.3g ms, robust spread %.3g ms (mean gap %.3g ms); lone-request TTFT RMS %.3g ms\n",
		res.RMSMS, res.SpreadMS, res.MeanMS, res.TTFTRMS), "sequences\tgaps\tmeasured ms\tfitted ms")
	for _, s := range res.BySeqs {
		fmt.Fprintf(tw, "  %d\t%d\t%.3f\t%.3f\t\n", s.Seqs, s.Gaps, s.Measured, s.Fitted)
	}
	tw.Flush()
	writeCalibWander(w, f.Wander)
	writeCalibTable(w, f.Table)
	writeCalibCompared(w, "The run's points", r.Measured)
	if r.AgainstRun != "" {
		held := "Held-out run " + r.AgainstRun
		if r.FitConcurrency != nil && r.AgainstRun == r.Run {
			held = "Held-out points of " + r.AgainstRun + " (the concurrencies not fitted)"
		}
		writeCalibCompared(w, held, r.Against)
		writeCalibRepeats(w, r.AgainstRepeats)
		writeCalibSteps(w, r.AgainstSteps, r.AgainstRun == r.Run)
	}
	writeCalibPredictions(w, r.Predictions)
	for _, s := range append(slices.Clip(f.Warnings), r.Warnings...) {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	return nil
}

// writeCalibWander prints the server's slow change of speed within the run.
func writeCalibWander(w io.Writer, wd *calib.Wander) {
	if wd == nil {
		fmt.Fprintf(w, "\nSpeed over the run: steady (no wander beyond the steps' own jitter)\n")
		return
	}
	fmt.Fprintf(w, "\nSpeed over the run: wanders by %.1f%% (sd) with a correlation time of %.2g s (%d windows of %.0f ms, adjacent ones correlate %.2f); the predictions replay it\n",
		100*wd.SD, wd.TimeS, wd.Windows, wd.WindowMS, wd.Lag1)
}

// writeCalibRepeats prints the held-out loads measured more than once.
func writeCalibRepeats(w io.Writer, rs []calib.RepeatedLoad) {
	if len(rs) == 0 {
		return
	}
	tw := calibTable(w, "\nHeld-out loads measured more than once: mean ±spread (sd/mean) / predicted (predicted/mean - 1; ~: within two standard errors of the mean, the server's own spread):\n",
		"users\truns\tTTFT p50 ms\t\tdecode tok/s/user\t\toutput tok/s\t")
	cell := func(mean, spread, pred, err float64, runs int) string {
		mark := ""
		if calib.WithinSpread(err, spread, runs) {
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

// writeCalibSteps prints the server's decode steps in the fit's run and the
// held-out run (or the fitted and held-out points of one run), side by
// side.
func writeCalibSteps(w io.Writer, steps []calib.StepChange, sameRun bool) {
	if len(steps) == 0 {
		return
	}
	sides := "fit run / held-out point"
	if sameRun {
		sides = "fitted points / held-out point, one run"
	}
	tw := calibTable(w, "\nThe server's own decode steps, "+sides+" (median of decode-only steps; share: of the point's; the server's change):\n",
		"point\tsequences\tgaps\tshare\tms\tchange")
	for _, c := range steps {
		fmt.Fprintf(tw, "  %s\t%d\t%d / %d\t%.0f%%\t%.3f / %.3f\t%+.1f%%\t\n", c.Point, c.Seqs, c.FitGaps, c.OtherGaps, 100*c.Share, c.FitMS, c.OtherMS, 100*c.Change)
	}
	tw.Flush()
}

// writeCalibTable prints the measured decode steps and the corrections the
// predictions make with them.
func writeCalibTable(w io.Writer, tab []calib.TableStep) {
	if len(tab) == 0 {
		return
	}
	tw := calibTable(w, "\nDecode steps by batch size (median; a correction where it is beyond 2 se of 0):\n",
		"sequences\tgaps\tmedian ms\tcorrection ms\tse ms")
	for _, t := range tab {
		fmt.Fprintf(tw, "  %d\t%d\t%.3f\t%+.3f\t%.3f\t\n", t.Seqs, t.Gaps, t.MedianMS, t.CorrectionMS, t.SEMS)
	}
	tw.Flush()
}

// writeCalibCompared prints measured beside predicted, point by point.
func writeCalibCompared(w io.Writer, title string, pts []calib.MeasuredPoint) {
	tw := calibTable(w, "\n"+title+", measured / predicted (predicted/measured - 1):\n", "users\tTTFT p50 ms\t\tdecode tok/s/user\t\toutput tok/s\t")
	for _, m := range pts {
		fmt.Fprintf(tw, "  %d\t%.1f / %.1f\t%+.1f%%\t%.1f / %.1f\t%+.1f%%\t%.1f / %.1f\t%+.1f%%\t\n", m.Measured.Concurrency,
			m.Measured.TTFTP50MS, m.Predicted.TTFTP50MS, 100*m.Errors.TTFT, m.Measured.DecodeTPS, m.Predicted.DecodeTPS,
			100*m.Errors.DecodeTPS, m.Measured.OutputTPS, m.Predicted.OutputTPS, 100*m.Errors.OutputTPS)
	}
	tw.Flush()
}

func writeCalibPredictions(w io.Writer, preds []plan.Prediction) {
	tw := calibTable(w, "\nPredicted (± one run's spread on this server, sd/mean over the simulator's runs):\n",
		"users\tprompt\toutput\tTTFT p50 ms\tdecode tok/s/user\toutput tok/s")
	for _, p := range preds {
		var sp plan.Ratios
		if p.Spread != nil {
			sp = *p.Spread
		}
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%.1f ±%.1f%%\t%.1f ±%.1f%%\t%.1f ±%.1f%%\t\n", p.Concurrency, p.PromptTokens, p.OutputTokens,
			p.TTFTP50MS, 100*sp.TTFT, p.DecodeTPS, 100*sp.DecodeTPS, p.OutputTPS, 100*sp.OutputTPS)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// calibTable prints a table's title, as given, and returns the writer of
// its right-aligned rows with the header (tab-separated columns) written;
// the caller writes the rows, each indented and ending in a tab, and
// flushes it.
func calibTable(w io.Writer, title, header string) *tabwriter.Writer {
	fmt.Fprint(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %s\t\n", header)
	return tw
}

// writeCalibShared prints the fit read into the shared roofline model, if any.
func writeCalibShared(w io.Writer, sh *calib.Shared) {
	if sh == nil {
		return
	}
	fmt.Fprintf(w, "\nShared roofline model of %s on %s, fitted (95%% bootstrap intervals); predictions run on it:\n", sh.Model, sh.Device)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeCalibParams(tw, sh.Params)
	tw.Flush()
	fmt.Fprintf(w, "  gap RMS %.3g ms\n", sh.RMSMS)
}
