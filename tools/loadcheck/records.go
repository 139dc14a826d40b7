package main

import (
	"fmt"
	"os"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// runDir is what the check reads back from a servebench run directory.
type runDir struct {
	Requests, Failed int
	Chunks           int64
	Window           time.Duration // first measured send to last measured end
	First            time.Time     // the first measured send
	Epoch            time.Time
	Records          []*record.Record // kept only when asked
	Client           record.ClientStats
}

// readRun reads the run directory dir as every reader of one does
// (rundir.Records: either records file, damaged lines skipped with a
// warning to stderr, duplicates dropped).
func readRun(dir string, keep bool) (runDir, error) {
	var d runDir
	var span record.Span
	run, err := rundir.Records(dir, func(w string) { fmt.Fprintf(os.Stderr, "warning: %s\n", w) }, func(r *record.Record) {
		if r.Phase != record.PhaseMeasured {
			return
		}
		d.Requests++
		if r.Error != nil {
			d.Failed++
		}
		d.Chunks += int64(len(r.Chunks))
		span.Add(r)
		if keep {
			c := *r
			c.Chunks = append([]record.Chunk(nil), r.Chunks...)
			d.Records = append(d.Records, &c)
		}
	})
	if err != nil {
		return d, err
	}
	if run == nil || run.Started == "" {
		return d, fmt.Errorf("%s: no %s: not a run written by servebench run --out", dir, rundir.RunFile)
	}
	if d.Epoch, err = time.Parse(time.RFC3339Nano, run.Started); err != nil {
		return d, fmt.Errorf("%s started: %w", rundir.RunFile, err)
	}
	if len(run.Points) > 0 {
		d.Client = run.Points[0].Client
	}
	d.Window = time.Duration(span.EndNS - span.StartNS)
	d.First = d.Epoch.Add(time.Duration(span.StartNS))
	return d, nil
}
