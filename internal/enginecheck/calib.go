package enginecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// The calibration check holds servebench plan --calibrate to a held-out
// run of the same engine: fitted on one run (concurrency 1 and 4), its
// predictions for the points of another (2, 8, 16) must come within the
// goal of what was measured there. Its input is plan --calibrate --against
// --json.

// CalibGoal is the largest |predicted/measured − 1| allowed per figure.
type CalibGoal struct {
	Throughput float64 // aggregate output tokens/s and per-user decode tokens/s
	TTFT       float64 // TTFT p50
}

// DefaultCalibGoal is the goal of the calibration (docs/PLANNER.md,
// Calibration): 10% for throughput and decode speed, 25% for TTFT p50.
var DefaultCalibGoal = CalibGoal{Throughput: 0.10, TTFT: 0.25}

// CalibRow is one figure of one held-out point.
type CalibRow struct {
	Concurrency         int
	Figure              string
	Measured, Predicted float64
	Err, Goal           float64 // predicted/measured − 1, and its bound
}

// OK reports whether the row meets its goal.
func (r CalibRow) OK() bool { return math.Abs(r.Err) <= r.Goal }

// calibFigures are a point's figures as the calibration JSON writes them.
type calibFigures struct {
	Concurrency int     `json:"concurrency"`
	TTFT        float64 `json:"ttft_p50_ms"`
	Decode      float64 `json:"decode_tps_per_request"`
	Output      float64 `json:"output_tps"`
}

// CheckCalibration reads plan --calibrate --against --json output and
// compares each held-out point with its prediction. No held-out point is
// an error: the check never passes by having nothing to check.
func CheckCalibration(data []byte, g CalibGoal) ([]CalibRow, error) {
	var rep struct {
		Against []struct {
			Measured  calibFigures `json:"measured"`
			Predicted calibFigures `json:"predicted"`
		} `json:"against"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	if len(rep.Against) == 0 {
		return nil, errors.New("no held-out point (run plan --calibrate with --against RUN_DIR)")
	}
	var rows []CalibRow
	for _, a := range rep.Against {
		m, p := a.Measured, a.Predicted
		for _, f := range []struct {
			name       string
			meas, pred float64
			goal       float64
		}{
			{"output tok/s", m.Output, p.Output, g.Throughput},
			{"decode tok/s/user", m.Decode, p.Decode, g.Throughput},
			{"TTFT p50 ms", m.TTFT, p.TTFT, g.TTFT},
		} {
			if !(f.meas > 0) {
				return nil, fmt.Errorf("c=%d: %s was not measured", m.Concurrency, f.name)
			}
			rows = append(rows, CalibRow{Concurrency: m.Concurrency, Figure: f.name, Measured: f.meas,
				Predicted: f.pred, Err: f.pred/f.meas - 1, Goal: f.goal})
		}
	}
	return rows, nil
}

// RenderCalib writes the rows as a table with a verdict per row.
func RenderCalib(w io.Writer, rows []CalibRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "calibration (held-out run)\tusers\tmeasured\tpredicted\terror\tgoal\t")
	for _, r := range rows {
		verdict := "ok"
		if !r.OK() {
			verdict = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%+.1f%%\t±%.0f%% %s\t\n", r.Figure, r.Concurrency, r.Measured, r.Predicted, 100*r.Err, 100*r.Goal, verdict)
	}
	return tw.Flush()
}
