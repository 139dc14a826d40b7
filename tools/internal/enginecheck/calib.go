package enginecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/plan"
)

// The calibration check holds servebench calibrate to a held-out run of
// the same engine: fitted on one run (concurrency 1 and 4), its
// predictions for the points of another (2, 8, 16) must come within the
// goal of what was measured there. Its input is calibrate --against
// --json: calib's Report.

// CalibGoal is the largest |predicted/measured − 1| allowed per figure.
type CalibGoal = calib.Goal

// DefaultCalibGoal is the goal of the calibration (docs/PLANNER.md,
// Calibration).
var DefaultCalibGoal = calib.DefaultGoal

// CalibRow is one figure of one held-out point, or of a held-out load
// measured several times (Runs > 1): then Measured is the mean of its runs
// and Spread their standard deviation over that mean.
type CalibRow struct {
	Concurrency         int
	Figure              string
	Runs                int
	Measured, Predicted float64
	Spread              float64
	// Err is predicted/measured − 1; Goal is DefaultCalibGoal's bound on
	// it, and Bound the one the check fails beyond (the same unless the
	// caller widened it).
	Err, Goal, Bound float64
}

// OK reports whether the row is within the bound the check fails beyond.
func (r CalibRow) OK() bool { return math.Abs(r.Err) <= r.Bound }

// MeetsGoal reports whether the row is within the calibration goal.
func (r CalibRow) MeetsGoal() bool { return math.Abs(r.Err) <= r.Goal }

// CheckCalibration reads calibrate --against --json output and compares
// each held-out point with its prediction. A load the held-out run
// measured more than once (against_repeats) is compared once, by the mean
// of its runs, as the goal is about the server, not one run of it. Each
// row is judged against DefaultCalibGoal and against bound, the bound a
// check fails beyond. No held-out point is an error: the check never
// passes by having nothing to check.
func CheckCalibration(data []byte, bound CalibGoal) ([]CalibRow, error) {
	g := DefaultCalibGoal
	var rep calib.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	if len(rep.Against) == 0 {
		return nil, errors.New("no held-out point (run servebench calibrate with --against RUN_DIR)")
	}
	var rows []CalibRow
	add := func(m, p plan.Prediction, runs int, sp plan.Ratios) error {
		for _, f := range []struct {
			name                string
			meas, pred          float64
			spread, goal, bound float64
		}{
			{"output tok/s", m.OutputTPS, p.OutputTPS, sp.OutputTPS, g.Throughput, bound.Throughput},
			{"decode tok/s/user", m.DecodeTPS, p.DecodeTPS, sp.DecodeTPS, g.Throughput, bound.Throughput},
			{"TTFT p50 ms", m.TTFTP50MS, p.TTFTP50MS, sp.TTFT, g.TTFT, bound.TTFT},
		} {
			if !(f.meas > 0) {
				return fmt.Errorf("c=%d: %s was not measured", m.Concurrency, f.name)
			}
			rows = append(rows, CalibRow{Concurrency: m.Concurrency, Figure: f.name, Runs: runs, Measured: f.meas,
				Predicted: f.pred, Spread: f.spread, Err: f.pred/f.meas - 1, Goal: f.goal, Bound: f.bound})
		}
		return nil
	}
	// A point of a repeated load is judged with the load's mean. The load
	// is the run's (its label); a report without labels is matched by
	// concurrency and lengths.
	repeated := map[string]bool{}
	key := func(label string, f plan.Prediction) string {
		if label != "" {
			return label
		}
		return fmt.Sprint([3]int{f.Concurrency, f.PromptTokens, f.OutputTokens})
	}
	for _, r := range rep.AgainstRepeats {
		repeated[key(r.Load, r.Mean)] = true
	}
	for _, a := range rep.Against {
		if repeated[key(a.Load, a.Measured)] {
			continue
		}
		if err := add(a.Measured, a.Predicted, 1, plan.Ratios{}); err != nil {
			return nil, err
		}
	}
	for _, r := range rep.AgainstRepeats {
		if err := add(r.Mean, r.Predicted, r.Runs, r.Spread); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// RenderCalib writes the rows as a table with a verdict per row against
// the goal, then how many rows meet it; where the check fails only beyond
// a wider bound, the table says so per row ("FAILED" beyond it).
func RenderCalib(w io.Writer, rows []CalibRow) error {
	widened := false
	for _, r := range rows {
		widened = widened || r.Bound != r.Goal
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "calibration (held-out run)\tusers\tmeasured\tpredicted\terror\tgoal\t"
	if widened {
		head += "fails beyond\t"
	}
	fmt.Fprintln(tw, head)
	met := 0
	for _, r := range rows {
		verdict := "ok"
		if r.MeetsGoal() {
			met++
		} else {
			verdict = "MISSED"
		}
		meas := fmt.Sprintf("%.1f", r.Measured)
		if r.Runs > 1 {
			meas = fmt.Sprintf("%.1f ±%.1f%% (mean of %d)", r.Measured, 100*r.Spread, r.Runs)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f\t%+.1f%%\t±%.0f%% %s\t", r.Figure, r.Concurrency, meas, r.Predicted, 100*r.Err, 100*r.Goal, verdict)
		if widened {
			bound := fmt.Sprintf("±%.0f%%", 100*r.Bound)
			if !r.OK() {
				bound += " FAILED"
			}
			fmt.Fprintf(tw, "%s\t", bound)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d of %d figures within the goal (%.0f%% for tokens/s, %.0f%% for TTFT p50)\n",
		met, len(rows), 100*DefaultCalibGoal.Throughput, 100*DefaultCalibGoal.TTFT)
	return err
}
