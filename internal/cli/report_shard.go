package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/shard"
	"github.com/servebench/servebench/internal/slo"
)

// hintCompare points a user who gave report several separate runs to the
// command that compares runs.
const hintCompare = "servebench compare A B, or servebench report --format html A B to overlay them (report merges only the workers of one sharded run)"

// merging are report's options for a merge of a sharded run's workers.
type merging struct {
	strict, partial bool
	slice           sliceFlag
	out             string // the merged run's directory, or ""
}

// mergeShards summarises several run directories as one run: the workers
// of one sharded run (run --shard), merged, and written to m.out when set.
// Separate runs are an error pointing at compare.
func mergeShards(dirs []string, m merging, observe func(*record.Record)) (*metrics.Summary, error) {
	var workers []*shard.Worker
	var runs []string
	for _, d := range dirs {
		w, err := shard.Read(d)
		switch {
		case errors.Is(err, shard.ErrNotShard):
			runs = append(runs, d)
			continue
		case err != nil:
			return nil, &Error{Err: err, Hint: "servebench report DIR0 DIR1 ... (the run directories of one sharded run's workers)", Code: ExitFailure}
		}
		workers = append(workers, w)
	}
	if len(runs) > 0 {
		what := "are separate runs"
		if len(workers) > 0 {
			what = fmt.Sprintf("are not workers of a sharded run, as %s is", workers[0].Dir)
		}
		return nil, usagef(hintCompare, "report takes one run, or the workers of one sharded run: %s %s", strings.Join(runs, ", "), what)
	}
	opt := shard.Options{Strict: m.strict, Partial: m.partial, Slice: m.slice.d, SliceSet: m.slice.set, Observe: observe}
	var out *rundir.Writer
	var records *record.Writer
	if m.out != "" {
		d, err := rundir.Create(m.out, false)
		if err != nil {
			return nil, benchError(err)
		}
		out, records = d, record.NewWriter(d.Records())
		opt.Records = records.Write
	}
	s, err := shard.Merge(workers, opt)
	if out != nil && err != nil {
		out.Remove()
	}
	if out != nil && err == nil {
		if err = out.Close(records); err == nil {
			err = out.Finish(s.Run, s)
		}
	}
	if ie, ok := errors.AsType[*shard.IncompleteError](err); ok {
		return nil, &Error{Err: fmt.Errorf("not every worker finished: %w", ie),
			Hint: "give every worker's directory; --partial merges what was recorded, with a warning naming the rest", Code: ExitFailure}
	}
	if err != nil {
		return nil, &Error{Err: err, Code: ExitFailure}
	}
	return s, nil
}

// mergedHTML prints the page of a sharded run's workers merged into one
// run, judged against o when given, as a single run's page.
func mergedHTML(env *Env, dirs []string, o *slo.Objective, m merging) error {
	curves := &metrics.Curves{}
	ev := &slo.Evaluator{}
	s, err := mergeShards(dirs, m, func(r *record.Record) {
		curves.Add(r)
		if o != nil { // the evaluator keeps every request's values: only a judged page needs them
			ev.Add(r)
		}
	})
	if err != nil {
		return err
	}
	r := report.HTMLRun{Name: fmt.Sprintf("%d workers merged", len(dirs)), Summary: s, Curves: curves}
	var unmetErr error
	if o != nil {
		oc := *o // judging sets the objective's loads to the run's own
		rep := judgeSummary(&oc, ev, s)
		r.Objective, r.Verdict = rep.Objective, rep.Verdict
		if !rep.Verdict.Holds {
			unmetErr = unmet(rep.Objective, rep.Verdict)
		}
	}
	if err := report.WriteHTML(env.Stdout, htmlPage([]report.HTMLRun{r})); err != nil {
		return err
	}
	return unmetErr
}
