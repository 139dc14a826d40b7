package calib

import (
	"io"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// ReadRun reads a run directory with its records, for a calibration: its
// summary rebuilt from the records as report rebuilds it (from in when dir
// is "-"), under o (whose Observe is ReadRun's own), and every record kept.
func ReadRun(dir string, in io.Reader, o rundir.Options) (Run, error) {
	run := Run{Dir: dir}
	o.Observe = func(r *record.Record) {
		c := *r // the reader reuses its record
		run.Records = append(run.Records, &c)
	}
	var err error
	run.Summary, err = rundir.Summarize(dir, in, o)
	return run, err
}
