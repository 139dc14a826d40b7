package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/workload"
)

// traceFlags are run's trace replay flags (docs/WORKLOADS.md, "Trace
// replay").
type traceFlags struct {
	o workload.TraceOptions
}

func (t *traceFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&t.o.Path, "trace", "", "replay a trace FILE: its requests' lengths at its arrival times, as one open-loop point (Mooncake JSONL, Azure or BurstGPT CSV; docs/WORKLOADS.md)")
	fs.StringVar(&t.o.Format, "trace-format", "", "format of --trace: "+record.TraceMooncake+", "+record.TraceAzure+" or "+record.TraceBurstGPT+" (default: tell by content)")
	fs.IntVar(&t.o.BlockSize, "trace-block-size", workload.DefaultTraceBlockSize, "tokens per hash id of a Mooncake --trace")
	fs.Float64Var(&t.o.Speed, "trace-speed", 1, "replay --trace this many times faster (2: the gaps halved)")
	fs.DurationVar(&t.o.Start, "trace-start", 0, "replay --trace from this long after its first request")
	fs.DurationVar(&t.o.Duration, "trace-duration", 0, "replay this much of --trace, in the trace's own time (0: to its end)")
	fs.IntVar(&t.o.Max, "trace-max", 0, "replay at most the first N requests of the --trace window (0: all)")
}

// traceHint points at the trace replay documentation.
const traceHint = "servebench run --trace FILE --trace-max 100 (trace replay: docs/WORKLOADS.md)"

// tracePlan plans a trace replay (bench.PlanTrace): the trace's window
// is the one load point, so the flags that choose loads or lengths are
// refused beside it. An objective, when given, judges the replay
// (Plan.JudgeTrace).
func (f *runFlags) tracePlan(o *slo.Objective) (*bench.Plan, error) {
	if err := f.traceConflicts(); err != nil {
		return nil, err
	}
	if err := f.checkAmounts(); err != nil {
		return nil, err
	}
	if !(f.trace.o.Speed > 0) {
		return nil, usagef("servebench run --trace FILE --trace-speed 2", "--trace-speed %v: must be a positive number (2 replays twice as fast)", f.trace.o.Speed)
	}
	p, err := bench.PlanTrace(f.trace.o, f.maxConcurrency, f.warmup.requests, f.warmup.duration)
	if err != nil {
		return nil, traceError(err)
	}
	p.Spec.ContextTokens = f.workload.ContextTokens
	if o != nil {
		p.JudgeTrace(o, f.slo.targetLoad)
	}
	return p, nil
}

// traceConflicts names the first flag that has no meaning beside --trace.
func (f *runFlags) traceConflicts() error {
	w := f.workload
	w.ContextTokens = 0 // the one workload flag a replay honours
	for _, c := range []struct {
		flag string
		set  bool
	}{
		{"concurrency", f.concurrency != ""}, {"rate", f.rate != ""}, {"requests", f.requests != 0},
		{"duration", f.dur != 0}, {"prompt-tokens", len(f.promptTokens.vals) > 0},
		{"output-tokens", len(f.outputTokens.vals) > 0}, {"dataset, --shared-prefix, --multi-turn or --long-context", w != workload.Spec{}},
		{"arrival", f.arrival != "" && f.arrival != defaultArrival}, {"slice", f.slice.set},
		{"shard", f.shard.shard.Count > 1},
	} {
		if c.set {
			return usagef(traceHint, "--%s cannot be used with --trace: the trace gives the arrivals and the lengths (--trace-start, --trace-duration and --trace-max take a part of it)", c.flag)
		}
	}
	return nil
}

// defaultArrival is --arrival's default.
const defaultArrival = load.ArrivalPoisson

// traceError tells a trace's error in the terms of its flags: a flag's
// value, a file that cannot be read, or a line that cannot be replayed.
func traceError(err error) error {
	if oe, ok := errors.AsType[*workload.TraceOptionError](err); ok {
		return usagef(traceHint, "%v", oe)
	}
	if te, ok := errors.AsType[*workload.TraceError](err); ok {
		return usagef(traceHint, "--trace %v", te)
	}
	if errors.Is(err, os.ErrNotExist) {
		return usagef(traceHint, "--trace: %v", err)
	}
	return fmt.Errorf("--trace: %w", err)
}
