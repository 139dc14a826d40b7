package report

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
)

// NewPage is the page of one run, or of several overlaid, titled after the
// run or the runs' names.
func NewPage(runs []HTMLRun) *HTMLPage {
	page := &HTMLPage{Runs: runs, Title: PageTitle(runs[0].Summary)}
	if len(runs) > 1 {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		page.Title = "servebench · " + strings.Join(names, " vs ")
	}
	return page
}

// RunName names a run on a page: its directory (a records file's directory
// when it sits in one), "standard input" for records piped in.
func RunName(arg string) string {
	if dir := rundir.Of(arg); dir != "" {
		return filepath.Base(filepath.Clean(dir))
	}
	return "standard input"
}

// LoadRun reads one run for a page, as report reads it: its summary
// recomputed from the records of arg (a run directory, a records file, or
// in when arg is "" or "-") under o, the distributions and timeline from
// the same records, and its verdict. With obj the verdict is judged here
// and returned as rep too (named: obj is a preset or a file, PageRun);
// without, it is the one the run recorded. o's
// Observe, when set, sees the records as well (compare's evaluator); its
// Sample is LoadRun's own.
func LoadRun(arg string, in io.Reader, o rundir.Options, obj *slo.Objective, named bool) (r HTMLRun, rep *slo.Report, err error) {
	var drawn []telemetry.Sample // those the timeline draws
	o.Sample = func(smp *telemetry.Sample) {
		if metrics.Drawn(smp) {
			drawn = append(drawn, *smp)
		}
	}
	also := o.Observe
	r, rep, err = PageRun(RunName(arg), obj, named, func(observe func(*record.Record)) (*metrics.Summary, error) {
		o.Observe = observe
		if also != nil {
			o.Observe = func(rec *record.Record) { observe(rec); also(rec) }
		}
		return rundir.Summarize(arg, in, o)
	})
	if err != nil {
		return r, nil, err
	}
	if err := r.Curves.AddTelemetry(telemetry.SliceScan(drawn), r.Summary.Run.Scale()); err != nil {
		return r, nil, err
	}
	if obj == nil && arg != "" && arg != "-" {
		if r.Objective, r.Verdict, err = rundir.RecordedVerdict(rundir.Of(arg)); err != nil {
			return r, nil, err
		}
	}
	return r, rep, nil
}

// LoadRuns reads runs for one page, one after the other, each as LoadRun
// reads it; unmet is the report of the first run obj, when given, does not
// hold for. The first run that cannot be read is the error.
func LoadRuns(args []string, in io.Reader, o rundir.Options, obj *slo.Objective, named bool) (runs []HTMLRun, unmet *slo.Report, err error) {
	for _, arg := range args {
		r, rep, err := LoadRun(arg, in, o, obj, named)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, r)
		if rep != nil && !rep.Verdict.Holds && unmet == nil {
			unmet = rep
		}
	}
	return runs, unmet, nil
}

// PageRun is a page's run of the records read hands to observe as it
// summarises them (LoadRun's, or a sharded run's workers merged): named
// name, its curves drawn from those records, and judged against obj when
// given (rep) as report judges it (slo.JudgeRead: named says obj is a
// preset or a file, whose workload the run's is checked against). Its
// telemetry and recorded verdict are the caller's.
func PageRun(name string, obj *slo.Objective, named bool, read func(observe func(*record.Record)) (*metrics.Summary, error)) (r HTMLRun, rep *slo.Report, err error) {
	curves := &metrics.Curves{}
	drawing := func(observe func(*record.Record)) (*metrics.Summary, error) {
		return read(func(rec *record.Record) {
			curves.Add(rec)
			if observe != nil {
				observe(rec)
			}
		})
	}
	var s *metrics.Summary
	if obj == nil {
		s, err = drawing(nil)
	} else if rep, err = slo.JudgeRead(obj, named, drawing); err == nil {
		s = rep.Summary
	}
	if err != nil {
		return r, nil, err
	}
	r = HTMLRun{Name: name, Summary: s, Curves: curves}
	if rep != nil {
		r.Objective, r.Verdict = rep.Objective, rep.Verdict
	}
	return r, rep, nil
}

// WriteRunPage writes a finished run's report.html into its directory: the
// page LoadRun and NewPage make of it, from the run's own summary and the
// curves it gathered as it wrote its records, so that the records are not
// read back. The telemetry samples and a judged run's verdict are read
// from their files, as LoadRun reads them.
func WriteRunPage(dir string, s *metrics.Summary, curves *metrics.Curves) error {
	if curves == nil {
		return errors.New("the run gathered no curves")
	}
	scan := func(fn func(*telemetry.Sample)) error {
		_, err := rundir.ScanTelemetry(dir, fn)
		return err
	}
	if err := curves.AddTelemetry(telemetry.InTimeOrder(scan, nil), s.Run.Scale()); err != nil {
		return err
	}
	r := HTMLRun{Name: RunName(dir), Summary: s, Curves: curves}
	var err error
	if r.Objective, r.Verdict, err = rundir.RecordedVerdict(dir); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, NewPage([]HTMLRun{r})); err != nil {
		return err
	}
	return rundir.WriteReport(dir, b.Bytes())
}
