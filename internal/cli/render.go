package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/slo"
)

// Output helpers every measuring command (run, report, decide) shares:
// the --format check, an objective's report, and its exit-3 error.

// renderReport prints an objective's report: the summary in the chosen
// format followed by the verdict in the same format, or one JSON document,
// or one CSV table with the verdict in columns.
func renderReport(w io.Writer, rep *slo.Report, format string) error {
	switch format {
	case "json":
		return report.ObjectiveJSON(w, rep)
	case "csv":
		return report.ObjectiveCSV(w, rep)
	}
	if err := report.Formats[format](w, rep.Summary); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if format == "markdown" {
		return report.VerdictMarkdown(w, rep.Objective, rep.Verdict)
	}
	return report.Verdict(w, rep.Objective, rep.Verdict)
}

// unmet is the exit-3 error of an objective that does not hold, the
// exit-4 error of one whose evidence cannot say, or the exit-1 error of a
// server failing at the target load for reasons no load explains (a wrong
// URL, model or API is not an objective missed).
func unmet(o *slo.Objective, v *slo.Verdict) error {
	if v.Failing {
		return &Error{Err: fmt.Errorf("the server is failing at %s, not overloaded: %s", v.TargetLoad.Text(record.LoadLong),
			strings.Join(v.Reasons, "; ")), Hint: hintFailing, Code: ExitFailure}
	}
	if v.Inconclusive {
		return &Error{Err: fmt.Errorf("objective %s INCONCLUSIVE at %s: %s", o.Name, v.TargetLoad.Text(record.LoadLong), v.Why()),
			Hint: hintInconclusive, Code: ExitInconclusive}
	}
	return &Error{Err: fmt.Errorf("objective %s not met at %s: %s", o.Name, v.TargetLoad.Text(record.LoadLong),
		strings.Join(v.Reasons, "; ")), Code: ExitObjective}
}

// hintInconclusive is what to do about evidence that cannot carry a
// conclusion.
const hintInconclusive = "measure again where the evidence holds: a lower --sim-config time_scale or a quieter machine for the simulator, the client on more or other cores, more requests per point for a tail percentile"

// formatRenderer returns the renderer of a --format value, or a usage
// error naming the command.
func formatRenderer(cmd, format string) (report.Renderer, error) {
	r, ok := report.Formats[format]
	if !ok {
		want := "text, markdown, csv or json"
		if cmd == "report" {
			want = "text, markdown, csv, json or html"
		}
		return nil, usagef("servebench "+cmd+" --format text", "--format %q: want %s", format, want)
	}
	return r, nil
}

// tableFormats are the --format values of a command that prints tables of
// its own beside runs' (sweep, decide): no one CSV holds them.
var tableFormats = []string{"text", "markdown", "json"}
