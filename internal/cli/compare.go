package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/report"
)

const compareUsage = `
Usage: servebench compare [flags] A B

Compares run B with run A (run directories written by servebench run
--out, or their ids in the history database: servebench history; several
runs of one side joined by commas, A1,A2,A3): at every load point both measured (the same load, and the same
workload cell of a workload matrix), the change B − A of TTFT, ITL and E2E
p50/p95/p99, per-request decode speed, aggregate output throughput and the
error rate, each with a confidence interval of the change and a verdict:
WORSE or better when the interval excludes no change, noise when it does
not. --json prints it for programs; --format html prints the HTML report's
page with both runs' charts overlaid and the comparison's tables.

The run is the unit of replication: runs of one server differ by more than
their requests suggest. The interval is a bootstrap over each side's runs
(repeats, or the runs joined by commas), then the requests in them. A side
of one run cannot show how runs differ, so the spread between that run's
own time slices stands in, and the interval is widened to it; where a run
is too short to slice, the verdict is unknown (one run each; repeat to
know). Each table says which. A and B naming the same run say so and exit 0.

Every summary is recomputed from records.jsonl, as report does: a damaged
line is skipped with a warning naming it, a run without summary.json is
compared on the records it wrote.

A comparison is controlled when both runs served the same model, revision,
quantization, runtime and version, context length and sampling, and ran
the same workload, load policy and time scale. Every difference is listed
loudly above the tables; --strict refuses an uncontrolled comparison (and
a damaged records file) instead.

--fail-on-regression 'METRIC [PERCENTILE] ±N%' (or ±N in the metric's unit)
exits 3 when, at some common load point, the metric got worse by more than
N and beyond its interval — a CI gate on a deployment change; an unknown
verdict does not fail it. Metric and
percentile names are those of --slo (speed p95 is the speed 95% of
requests reach); latencies get worse upwards (+), speeds downwards (-). An
error rate's +N% is N percentage points.

Exit codes: 0 compared (and every gate held), 1 failure (unreadable run,
--strict refused, no common load point to judge a gate at), 2 usage, 3 a
regression gate failed, 4 no gate failed but one was judged at a point
either run measured on invalid evidence (INCONCLUSIVE, with the reason).

Examples:
  servebench compare runs/before runs/after
  servebench compare --json runs/before runs/after
  servebench compare 12 14            (history ids: servebench history lists them)
  servebench compare runs/a1,runs/a2,runs/a3 runs/b1,runs/b2,runs/b3
  servebench compare --format html runs/before runs/after > compare.html
  servebench compare --strict --fail-on-regression 'ttft p95 +10%' \
      --fail-on-regression 'speed p50 -5%' runs/main runs/candidate
  servebench compare --fail-on-regression 'e2e p99 +200ms' runs/a runs/b
`

func compareCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "compare", compareUsage)
	format := fs.String("format", "text", "output format: text, json, or html (both runs' charts overlaid, with the comparison's tables)")
	jsonOut := fs.Bool("json", false, "print the comparison as JSON (same as --format json)")
	strict := fs.Bool("strict", false, "refuse a comparison that is not controlled, and a damaged records file")
	var gates []compare.Gate
	var gateTexts []string // as given, for the public package
	fs.Func("fail-on-regression", "exit 3 when a metric got worse beyond this and beyond its interval, e.g. 'ttft p95 +10%' or 'speed p50 -5%' (repeatable)", func(v string) error {
		g, err := compare.ParseGate(v)
		gates, gateTexts = append(gates, g), append(gateTexts, v)
		return err
	})
	var db string
	defineDB(fs, &db)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *jsonOut {
		*format = "json"
	}
	if err := compareArgs(fs.Args(), *format); err != nil {
		return err
	}
	var dirs, names [2][]string
	for i, arg := range fs.Args() {
		var err error
		if dirs[i], names[i], err = sidePaths(ctx, env, db, arg, *format); err != nil {
			return err
		}
	}
	var r *compare.Result
	var page *report.HTMLPage
	var err error
	if *format == "html" {
		r, page, err = report.ComparePage(compare.RunPath{Name: names[0][0], Path: dirs[0][0]}, compare.RunPath{Name: names[1][0], Path: dirs[1][0]},
			env.readOptions(*strict, sliceFlag{}), gates, env.warn)
		if err != nil {
			return runReadError(err)
		}
	} else if r, err = compareRuns(env, dirs, names, *strict, gateTexts); err != nil {
		return err
	}
	if *strict && !r.Controlled {
		return &Error{Err: fmt.Errorf("--strict: not a controlled comparison: %s", r.KnownDifferences()),
			Hint: "compare without --strict to see the changes with the differences listed", Code: ExitFailure}
	}
	if err := writeComparison(env, r, page, *format); err != nil {
		return err
	}
	return gateOutcome(r, gates)
}

// compareRuns reads both sides at once through the public package
// (servebench.OpenRuns), as report reads a run, and compares them.
func compareRuns(env *Env, dirs, names [2][]string, strict bool, gates []string) (*compare.Result, error) {
	var sides [2]*servebench.Result
	err := compare.Both(func(i int, warn func(string)) (err error) {
		sides[i], err = servebench.OpenRuns(dirs[i], servebench.OpenOptions{Strict: strict, Warn: warn, Names: names[i]})
		return err
	}, env.warn)
	if err != nil {
		return nil, runReadError(err)
	}
	return servebench.Compare(sides[0], sides[1], servebench.CompareOptions{Gates: gates})
}

// compareArgs checks the two runs and the format.
func compareArgs(args []string, format string) error {
	const hint = "servebench compare runs/before runs/after"
	if len(args) != 2 {
		return usagef(hint, "compare takes two runs (A, then B), got %d", len(args))
	}
	for _, a := range args {
		if a == "-" || a == "" {
			return usagef(hint, "compare reads run directories, not standard input")
		}
	}
	if format != "text" && format != "json" && format != "html" {
		return usagef("servebench compare --format json runs/a runs/b", "--format %q: want text, json or html", format)
	}
	return nil
}

// comparePath is a run argument as a path: a run directory or records
// file as given, else a history id looked up in the history database.
func comparePath(ctx context.Context, env *Env, db, arg string) (string, error) {
	if _, err := os.Stat(arg); err == nil {
		return arg, nil
	}
	return resolveRun(ctx, env, db, arg)
}

// sidePaths are the runs one side names, their paths and names: a run (a
// directory or a history id), or several joined by commas.
func sidePaths(ctx context.Context, env *Env, db, arg, format string) (paths, names []string, err error) {
	names = []string{arg}
	if _, err := os.Stat(arg); err != nil && strings.Contains(arg, ",") {
		names = strings.Split(arg, ",")
	}
	if len(names) > 1 && format == "html" {
		return nil, nil, usagef("servebench compare --format html runs/a runs/b", "--format html draws one run a side; %q names %d", arg, len(names))
	}
	for _, name := range names {
		path, err := comparePath(ctx, env, db, name)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, path)
	}
	return paths, names, nil
}

// writeComparison prints the comparison, or its page (report.ComparePage).
func writeComparison(env *Env, r *compare.Result, page *report.HTMLPage, format string) error {
	switch format {
	case "json":
		return report.ComparisonJSON(env.Stdout, r)
	case "html":
		return report.WriteHTML(env.Stdout, page)
	}
	return report.Comparison(env.Stdout, r)
}

// gateOutcome is the exit of the regression gates: 3 when one failed, 4
// when none failed but one was judged on invalid evidence, 1 when there
// were gates but no common load point to judge them at.
func gateOutcome(r *compare.Result, gates []compare.Gate) error {
	if len(gates) == 0 || r.SameRun != "" {
		return nil
	}
	if len(r.Points) == 0 {
		return &Error{Err: fmt.Errorf("no common load point: the regression gates could not be judged"),
			Hint: "compare runs measured at the same loads and workload", Code: ExitFailure}
	}
	if failed := r.Failures(); len(failed) > 0 {
		return &Error{Err: fmt.Errorf("regression: %s", strings.Join(failed, "; ")), Code: ExitRegression}
	}
	if r.Inconclusive {
		// a failure on valid points outranks it: 3 before 4
		return &Error{Err: fmt.Errorf("regression gates INCONCLUSIVE at %s", strings.Join(r.InconclusiveAt(), "; ")), Hint: hintInconclusive, Code: ExitInconclusive}
	}
	return nil
}
