package cli

import (
	"errors"

	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// reportHTML prints the HTML report of one run, or of several runs
// overlaid as candidates (one page, their load points on the same charts).
// Each run is read as report reads it (report.LoadRuns); its verdict is
// judged anew when an objective is given, else it is the one the run
// recorded. Exit 3 when an objective given here does not hold for some run.
func reportHTML(env *Env, args []string, o *slo.Objective, named, strict bool, slice sliceFlag) error {
	if len(args) == 0 {
		args = []string{""}
	}
	runs, rep, err := report.LoadRuns(args, env.Stdin, env.readOptions(strict, slice), o, named)
	if err != nil {
		return runReadError(err)
	}
	return writePage(env, report.NewPage(runs), rep)
}

// writePage prints a page, then exits 3 when rep, a run judged against an
// objective given here, says it does not hold.
func writePage(env *Env, page *report.HTMLPage, rep *slo.Report) error {
	if err := report.WriteHTML(env.Stdout, page); err != nil {
		return err
	}
	if rep != nil && !rep.Verdict.Holds {
		return unmet(rep.Objective, rep.Verdict)
	}
	return nil
}

// runReadError is readError for a run read with its recorded verdict: a
// summary.json that does not decode gets the hint that helps.
func runReadError(err error) error {
	if errors.As(err, new(*rundir.RecordedError)) {
		return &Error{Err: err, Hint: "servebench report --format json DIR recomputes the summary from the records", Code: ExitFailure}
	}
	return readError(err)
}
