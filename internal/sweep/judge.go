package sweep

import (
	"fmt"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// JudgeRuns is the sweep as it would have been written had it run with
// objective o, no server started again: each measured configuration's run
// judged from its records as a recorded run is judged (slo.JudgeRead,
// read with opts), then the recommendation made again (Rejudge). named: o
// is a preset or a file, and a run whose workload is not o's is told to
// opts.Warn. f is left as it is.
func (f *File) JudgeRuns(o *slo.Objective, named bool, opts rundir.Options) (*File, error) {
	judged := map[string]Judged{}
	for _, c := range f.Configs {
		if c.Error != nil || c.RunDir == "" || len(c.Points) == 0 {
			continue
		}
		rep, err := slo.JudgeRead(o, false, func(observe func(*record.Record)) (*metrics.Summary, error) {
			ro := opts
			ro.Observe = observe
			return rundir.Summarize(c.RunDir, nil, ro)
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err) // its reader's hint kept
		}
		j := Judged{Verdict: rep.Verdict}
		if run := rep.Summary.Run; run != nil {
			j.Server = run.Target.Server
			if w := slo.WorkloadDifference(o, run); named && w != "" && opts.Warn != nil {
				opts.Warn(c.Name + ": " + w)
			}
		}
		judged[c.Name] = j
	}
	return f.Rejudge(o, judged), nil
}
