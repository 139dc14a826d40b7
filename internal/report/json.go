package report

import (
	"encoding/json"
	"io"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/store"
)

// writeJSON writes v indented, the JSON form of every result. The run's
// contracts (summary.json, verdicts, decisions, compare --json) leave <, >
// and & as written; the plan, calibration and history documents have
// always escaped them, and escaping is kept there so their bytes stay.
func writeJSON(w io.Writer, v any, escapeHTML bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	return enc.Encode(v)
}

// PlanJSON writes a capacity plan as plan --json prints it.
func PlanJSON(w io.Writer, r *plan.Result) error { return writeJSON(w, r, true) }

// PlanComparisonJSON writes a plan set against a run as plan --compare
// --json prints it.
func PlanComparisonJSON(w io.Writer, c *plan.Comparison) error { return writeJSON(w, c, true) }

// CalibrationJSON writes a calibration as calibrate --json prints it.
func CalibrationJSON(w io.Writer, r *calib.Report) error { return writeJSON(w, r, true) }

// HistoryListJSON writes stored runs as history --json prints them.
func HistoryListJSON(w io.Writer, runs []store.Run) error { return writeJSON(w, runs, true) }

// HistoryRunJSON writes one stored run as history show --json prints it.
func HistoryRunJSON(w io.Writer, d *store.Detail) error { return writeJSON(w, d, true) }
