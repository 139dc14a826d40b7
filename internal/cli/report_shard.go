package cli

import (
	"errors"
	"fmt"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
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
	workers, err := shard.ReadWorkers(dirs)
	if se, ok := errors.AsType[*shard.SeparateError](err); ok {
		return nil, usagef(hintCompare, "report takes one run, or the workers of one sharded run: %v", se)
	}
	if err != nil {
		return nil, &Error{Err: err, Hint: "servebench report DIR0 DIR1 ... (the run directories of one sharded run's workers)", Code: ExitFailure}
	}
	opt := shard.Options{Strict: m.strict, Partial: m.partial, Slice: m.slice.d, SliceSet: m.slice.set, Observe: observe}
	s, err := shard.MergeInto(workers, opt, m.out)
	if ie, ok := errors.AsType[*shard.IncompleteError](err); ok {
		return nil, &Error{Err: fmt.Errorf("not every worker finished: %w", ie),
			Hint: "give every worker's directory; --partial merges what was recorded, with a warning naming the rest", Code: ExitFailure}
	}
	if err != nil {
		return nil, benchError(err)
	}
	return s, nil
}

// mergedHTML prints the page of a sharded run's workers merged into one
// run, judged against o when given, as a single run's page.
func mergedHTML(env *Env, dirs []string, o *slo.Objective, named bool, m merging) error {
	r, rep, err := report.PageRun(fmt.Sprintf("%d workers merged", len(dirs)), o, named, func(observe func(*record.Record)) (*metrics.Summary, error) {
		return mergeShards(dirs, m, observe)
	})
	if err != nil {
		return err
	}
	return writePage(env, report.NewPage([]report.HTMLRun{r}), rep)
}
