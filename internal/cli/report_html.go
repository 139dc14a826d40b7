package cli

import (
	"errors"

	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// reportHTML prints the HTML report of one run, or of several runs
// overlaid as candidates (one page, their load points on the same charts).
// Each run is read as report reads it; its verdict is judged anew when an
// objective is given, else it is the one the run recorded. Exit 3 when an
// objective given here does not hold for some run.
func reportHTML(env *Env, args []string, o *slo.Objective, strict bool, slice sliceFlag) error {
	if len(args) == 0 {
		args = []string{""}
	}
	var runs []report.HTMLRun
	var unmetErr error
	for _, arg := range args {
		r, rep, err := htmlRun(env, arg, strict, slice, o)
		if err != nil {
			return err
		}
		runs = append(runs, r)
		if rep != nil && !rep.Verdict.Holds && unmetErr == nil {
			unmetErr = unmet(rep.Objective, rep.Verdict)
		}
	}
	if err := report.WriteHTML(env.Stdout, report.NewPage(runs)); err != nil {
		return err
	}
	return unmetErr
}

// htmlRun reads one run for a page (report.LoadRun), its errors given the
// hints that help.
func htmlRun(env *Env, arg string, strict bool, slice sliceFlag, o *slo.Objective) (report.HTMLRun, *slo.Report, error) {
	r, rep, err := report.LoadRun(arg, env.Stdin, env.readOptions(strict, slice), o)
	if err != nil {
		return r, nil, runReadError(err)
	}
	return r, rep, nil
}

// runReadError is readError for a run read with its recorded verdict: a
// summary.json that does not decode gets the hint that helps.
func runReadError(err error) error {
	if errors.As(err, new(*rundir.RecordedError)) {
		return &Error{Err: err, Hint: "servebench report --format json DIR recomputes the summary from the records", Code: ExitFailure}
	}
	return readError(err)
}
