package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/shard"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/sweep"
)

const reportUsage = `
Usage: servebench report [flags] [DIR | FILE | -]
       servebench report --format html DIR...
       servebench report [flags] DIR0 DIR1 ...   (the workers of one sharded run, merged)

Recomputes every summary from records alone: a run directory (its
records.jsonl, with run.json for context when present), a records file, or
standard input ("-", or no argument when records are piped in).

A damaged records file (a crash leaves a truncated last line) is read
line by line: every good record counts and the bad lines are named in a
warning; --strict refuses such a file instead. A run directory without
summary.json is a run that did not finish (killed, or a second Ctrl-C);
its report says so.

A run made with --slice (or a --duration of 10m or more) shows its slices
and drift check; --slice here cuts any recorded run into slices of its own.

--format html prints the page a run writes as report.html: charts of
speed, throughput and latency against load, distributions and the
timeline, in one file that opens offline. Given several run directories
it overlays them on one page, candidates side by side.

Several run directories written by the workers of one sharded run (run
--shard I/N) are merged into one run, in any format: every point
summarised from all records on one clock, each worker's client figures and
start offset listed. A missing worker, or one that did not finish, is an
error naming it; --partial merges what was recorded, with a warning naming
them (docs/DISTRIBUTED.md). Separate runs are overlaid with --format html,
and compared with servebench compare.

A sweep's directory (servebench sweep --out DIR) is reported as the
sweep reported it when it ended: its configurations, Pareto frontier,
plans and recommendation (text or markdown), its sweep.json (--json), or
its page (--format html), with the sweep's exit code. With --objective or
--slo each configuration's run is judged again and the recommendation
made again, as if the sweep had run with that objective (sweep.json is
not changed). To slice one configuration, report its run, DIR/NAME.

With --objective or --slo it also judges the records against a serving
objective, as run does, and exits 3 when the objective does not hold, 4 when
its evidence cannot say (INCONCLUSIVE, with the reason).

Examples:
  servebench report runs/a
  servebench report --objective chat runs/a
  servebench report --slo 'ttft p95 <= 1s' --slo 'speed p95 >= 20 tok/s' runs/a
  servebench report --json runs/a/records.jsonl
  servebench report --slice 5m runs/long
  servebench report --format html runs/a > a.html
  servebench report --format html runs/vllm runs/sglang > candidates.html
  cat runs/a/records.jsonl | servebench report --format markdown
  servebench report --out runs/c256-merged runs/c256/worker-*
  servebench report --format markdown runs/sweep
  servebench report --slo 'ttft p95 <= 500ms' runs/sweep
`

func reportCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report", reportUsage)
	format := fs.String("format", "text", "output format: text, markdown, csv, json, html (a page with charts; several runs are overlaid)")
	jsonOut := fs.Bool("json", false, "print the summary JSON (same as --format json)")
	objective := fs.String("objective", "", "judge the records against a serving objective: a preset or a YAML file")
	var slos []slo.SLO
	fs.Func("slo", "an SLO to judge by, e.g. 'ttft p95 <= 1.5s' (repeatable; replaces the objective's SLO on the same metric and percentile)", func(v string) error {
		x, err := slo.Parse(v)
		slos = append(slos, x)
		return err
	})
	targetLoad := fs.Float64("target-load", 0, "the load at which the objective must hold (default: the objective's target, else the highest load)")
	strict := fs.Bool("strict", false, "refuse a records file with a damaged line instead of skipping it with a warning")
	out := fs.String("out", "", "merging a sharded run's workers: also write the merged run to this new directory (records.jsonl, run.json, summary.json), for compare and history")
	partial := fs.Bool("partial", false, "merging a sharded run's workers: merge even when some are missing or did not finish (a warning names them)")
	var slice sliceFlag
	fs.Var(&slice, "slice", "cut each load point into slices of this much (model) time and check them for drift, e.g. 1m (default: the run's own --slice)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 && env.StdinIsTerminal {
		return usagef("servebench report runs/a  or  servebench report - < records.jsonl", "report needs a run directory or records file (or records piped in)")
	}
	if err := formatArgument(fs.Args()); err != nil {
		return err
	}
	if *jsonOut {
		*format = "json"
	}
	var o *slo.Objective
	if *objective != "" || len(slos) > 0 {
		var err error
		if o, err = reportObjective(*objective, slos, *targetLoad); err != nil {
			return err
		}
	}
	if i := slices.IndexFunc(fs.Args(), sweep.In); i >= 0 {
		return reportSweep(ctx, env, fs, fs.Arg(i), *format, o, *objective != "", *strict)
	}
	// Several directories: the workers of one sharded run are merged (in
	// any format); other runs are overlaid with --format html, and
	// anything else is an error pointing at compare (mergeShards).
	shards := fs.NArg() > 1 && shard.All(fs.Args())
	if *out != "" && !shards {
		return usagef("servebench report --out runs/merged runs/w0 runs/w1 ...", "--out writes the merged run of a sharded run's workers; give their directories")
	}
	m := merging{strict: *strict, partial: *partial, slice: slice, out: *out}
	if *format == "html" && shards {
		return mergedHTML(env, fs.Args(), o, *objective != "", m)
	}
	if *format == "html" {
		return reportHTML(env, fs.Args(), o, *objective != "", *strict, slice)
	}
	render, err := formatRenderer("report", *format)
	if err != nil {
		return err
	}
	if o == nil {
		var s *metrics.Summary
		if fs.NArg() > 1 {
			s, err = mergeShards(fs.Args(), m, nil)
		} else {
			s, err = openRun(env, fs.Arg(0), *strict, slice)
		}
		if err != nil {
			return err
		}
		// Printed first, then exit 1 as run does: every request failed.
		if err := render(env.Stdout, s); err != nil {
			return err
		}
		return allFailed(s)
	}
	rep, err := slo.JudgeRead(o, *objective != "", func(observe func(*record.Record)) (*metrics.Summary, error) {
		if fs.NArg() > 1 {
			return mergeShards(fs.Args(), m, observe)
		}
		return loadSummary(env, fs.Arg(0), *strict, slice, observe)
	})
	if err != nil {
		return err
	}
	if err := renderReport(env.Stdout, rep, *format); err != nil {
		return err
	}
	if !rep.Verdict.Holds {
		return unmet(rep.Objective, rep.Verdict)
	}
	return nil
}

// formatArgument is a usage error for an argument that names an output
// format and no file ("report runs/a json"): the flag was meant.
func formatArgument(args []string) error {
	for i, a := range args {
		if _, format := report.Formats[a]; !format && a != "html" {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			continue
		}
		flag := "--format " + a
		if a == "json" {
			flag = "--json"
		}
		rest := strings.Join(slices.Delete(slices.Clone(args), i, i+1), " ")
		return usagef("servebench report "+flag+" "+rest, "%q is not a run directory or records file: for %s output, give %s", a, a, flag)
	}
	return nil
}

// reportObjective builds the objective report judges by.
func reportObjective(name string, slos []slo.SLO, target float64) (*slo.Objective, error) {
	const hint = "servebench report --objective chat runs/a  or  --slo 'ttft p95 <= 1s'"
	o := &slo.Objective{Name: "command-line", Priority: slo.PriorityResponsiveness}
	if name != "" {
		var err error
		if o, err = loadObjective(name); err != nil {
			return nil, err
		}
	}
	o.Overlay(slos, target)
	if len(o.Checks()) == 0 {
		return nil, usagef(hint, "objective %s has no SLO", o.Name)
	}
	return o, nil
}

// openRun reads one run as report reads it (servebench.OpenRuns): a run
// directory, a records file, or standard input.
func openRun(env *Env, arg string, strict bool, slice sliceFlag) (*metrics.Summary, error) {
	r, err := servebench.OpenRuns([]string{arg}, servebench.OpenOptions{Strict: strict, Slice: slice.d, Stdin: env.Stdin, Warn: env.warn})
	if err != nil {
		return nil, readError(err)
	}
	return r.Summary, nil
}

// loadSummary reads records from a run directory, a file or stdin and
// summarises them; run.json is used for context when it sits beside them.
// Unless strict, damaged lines are skipped with a warning on stderr.
func loadSummary(env *Env, arg string, strict bool, slice sliceFlag, observe func(*record.Record)) (*metrics.Summary, error) {
	o := env.readOptions(strict, slice)
	o.Observe = observe
	s, err := rundir.Summarize(arg, env.Stdin, o)
	if err != nil {
		return nil, readError(err)
	}
	return s, nil
}

// readOptions are how every command reads a run: warnings on stderr, a
// merged sharded run's workers' warnings first.
func (env *Env) readOptions(strict bool, slice sliceFlag) rundir.Options {
	return rundir.Options{Strict: strict, Slice: slice.d, SliceSet: slice.set, Warn: env.warn, RunWarnings: shard.Warnings}
}

// warn prints a warning on stderr.
func (env *Env) warn(w string) { fmt.Fprintf(env.Stderr, "warning: %s\n", w) }

// readError gives a run that could not be read the hint that helps: its
// reader's, or for one without records where they come from.
func readError(err error) error {
	e := hinted(err)
	if e.Hint == "" && errors.Is(err, rundir.ErrNoRecords) {
		e.Hint = "servebench run --out DIR writes DIR/" + rundir.RecordsFile
	}
	return e
}
