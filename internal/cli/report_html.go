package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
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
	if err := report.WriteHTML(env.Stdout, htmlPage(runs)); err != nil {
		return err
	}
	return unmetErr
}

// htmlPage is the page of one run, or of several overlaid, titled after
// the run or the runs' names.
func htmlPage(runs []report.HTMLRun) *report.HTMLPage {
	page := &report.HTMLPage{Runs: runs, Title: report.PageTitle(runs[0].Summary)}
	if len(runs) > 1 {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		page.Title = "servebench · " + strings.Join(names, " vs ")
	}
	return page
}

// htmlRun reads one run for a page: its summary recomputed from the
// records, the distributions and timeline from the same records, and its
// verdict. rep is the verdict judged here against o (nil without o).
func htmlRun(env *Env, arg string, strict bool, slice sliceFlag, o *slo.Objective) (r report.HTMLRun, rep *slo.Report, err error) {
	return htmlRunInto(env, arg, strict, slice, o, nil)
}

// htmlRunInto is htmlRun feeding the records to ev as well when it is not
// nil, for a caller that needs them by load (compare).
func htmlRunInto(env *Env, arg string, strict bool, slice sliceFlag, o *slo.Objective, ev *slo.Evaluator) (r report.HTMLRun, rep *slo.Report, err error) {
	curves := &metrics.Curves{}
	if ev == nil && o != nil {
		ev = &slo.Evaluator{}
	}
	var samples []telemetry.Sample
	s, err := loadSummarySampled(env, arg, strict, slice, func(rec *record.Record) {
		curves.Add(rec)
		if ev != nil { // judged here, or wanted by the caller: the evaluator keeps every request's values
			ev.Add(rec)
		}
	}, func(ss []telemetry.Sample) { samples = ss })
	if err != nil {
		return r, nil, err
	}
	curves.AddTelemetry(samples, s.Run.Scale())
	r = report.HTMLRun{Name: runName(arg), Summary: s, Curves: curves}
	switch {
	case o != nil:
		oc := *o // judging sets the objective's loads to the run's own
		rep = judgeSummary(&oc, ev, s)
		r.Objective, r.Verdict = rep.Objective, rep.Verdict
	case arg != "" && arg != "-":
		if r.Objective, r.Verdict, err = recordedVerdict(runDir(arg)); err != nil {
			return r, nil, err
		}
	}
	return r, rep, nil
}

// runDir is the directory of a run argument: the argument itself, or a
// records file's directory; "" for standard input.
func runDir(arg string) string {
	if arg == "" || arg == "-" {
		return ""
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return filepath.Dir(arg)
	}
	return arg
}

// runName names a run on a page: its directory (a records file's
// directory when it sits in one), "standard input" for records piped in.
func runName(arg string) string {
	if dir := runDir(arg); dir != "" {
		return filepath.Base(filepath.Clean(dir))
	}
	return "standard input"
}

// recordedVerdict is the verdict a judged run wrote into summary.json
// (nil when the run was not judged, or did not finish).
func recordedVerdict(dir string) (*slo.Objective, *slo.Verdict, error) {
	const hint = "servebench report --format json DIR recomputes the summary from the records"
	r, err := rundir.ReadRecorded(dir)
	if errors.As(err, new(*rundir.RecordedError)) {
		return nil, nil, &Error{Err: err, Hint: hint, Code: ExitFailure}
	}
	if err != nil {
		return nil, nil, &Error{Err: err, Code: ExitFailure}
	}
	if r == nil || r.Verdict == nil {
		return nil, nil, nil
	}
	o, err := r.DecodeObjective(dir)
	if err != nil {
		return nil, nil, &Error{Err: err, Hint: hint, Code: ExitFailure}
	}
	return o, r.Verdict, nil
}

// writeRunHTML writes a finished run's report.html: the page report
// --format html prints for its directory (TestHTMLRunWritesReport holds
// them byte for byte equal), from the run's own summary and the curves it
// gathered as it wrote its records, so that the records are not read back.
// The telemetry samples and a judged run's verdict are read from their
// files, as report reads them. A page that cannot be written costs the run
// nothing: its records are already on disk.
func writeRunHTML(env *Env, dir string, res *bench.Result) bool {
	if err := writePage(dir, res); err != nil {
		fmt.Fprintf(env.Stderr, "warning: %s not written: %v (servebench report --format html %s writes it later)\n", rundir.ReportFile, err, dir)
		return false
	}
	return true
}

// writeRunFiles writes a finished run's HTML report into its --out
// directory, and ends the run's output with the line saying where its
// files went, or that without --out none were kept.
func writeRunFiles(env *Env, dir string, res *bench.Result) {
	if dir == "" {
		fmt.Fprintf(env.Stderr, "no files kept: --out DIR writes the records, run.json, summary.json and the HTML report DIR/%s\n", rundir.ReportFile)
		return
	}
	html := ""
	if writeRunHTML(env, dir, res) {
		html = "; HTML report " + filepath.Join(dir, rundir.ReportFile)
	}
	fmt.Fprintf(env.Stderr, "%d records written to %s%s\n", res.Records, dir, html)
}

func writePage(dir string, res *bench.Result) error {
	if res.Curves == nil {
		return errors.New("the run gathered no curves")
	}
	samples, _, err := rundir.ReadTelemetry(dir)
	if err != nil {
		return &Error{Err: err, Code: ExitFailure}
	}
	res.Curves.AddTelemetry(samples, res.Summary.Run.Scale())
	r := report.HTMLRun{Name: runName(dir), Summary: res.Summary, Curves: res.Curves}
	if r.Objective, r.Verdict, err = recordedVerdict(dir); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, htmlPage([]report.HTMLRun{r})); err != nil {
		return err
	}
	return rundir.WriteReport(dir, b.Bytes())
}
