package cli

import (
	"cmp"
	"slices"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/shard"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
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
	// Several directories: the workers of one sharded run are merged (in
	// any format); other runs are overlaid with --format html, and
	// anything else is an error pointing at compare (mergeShards).
	shards := fs.NArg() > 1 && shard.All(fs.Args())
	if *out != "" && !shards {
		return usagef("servebench report --out runs/merged runs/w0 runs/w1 ...", "--out writes the merged run of a sharded run's workers; give their directories")
	}
	m := merging{strict: *strict, partial: *partial, slice: slice, out: *out}
	if *format == "html" && shards {
		return mergedHTML(env, fs.Args(), o, m)
	}
	if *format == "html" {
		return reportHTML(env, fs.Args(), o, *strict, slice)
	}
	render, err := formatRenderer("report", *format)
	if err != nil {
		return err
	}
	// The evaluator keeps every request's values: only a judged report
	// needs it, and a records file larger than memory must not feed it.
	ev := &slo.Evaluator{}
	var add func(*record.Record)
	if o != nil {
		add = ev.Add
	}
	var s *metrics.Summary
	if fs.NArg() > 1 {
		s, err = mergeShards(fs.Args(), m, add)
	} else {
		s, err = loadSummary(env, fs.Arg(0), *strict, slice, add)
	}
	if err != nil {
		return err
	}
	if o == nil {
		// Printed first, then exit 1 as run does: every request failed.
		if err := render(env.Stdout, s); err != nil {
			return err
		}
		return allFailed(s)
	}
	if *objective != "" {
		// A named objective comes with its workload; SLOs set for it say
		// little about another one.
		if w := slo.WorkloadDifference(o, s.Run); w != "" {
			s.Warnings = append(s.Warnings, w)
		}
	}
	return judgeRecorded(env, o, ev, s, *format)
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
	for _, x := range slos {
		o.SetSLO(x)
	}
	if target > 0 {
		o.Load.Target = target
	}
	if len(o.Checks()) == 0 {
		return nil, usagef(hint, "objective %s has no SLO", o.Name)
	}
	return o, nil
}

// judgeRecorded judges recorded load points as run judged them while
// measuring: the same evaluator over the same records. Loads recorded more
// than once (run --repeat) get confidence intervals. What the records
// cannot say is whether run stopped a point early as overloaded; such a
// point is judged on the requests it completed.
func judgeRecorded(env *Env, o *slo.Objective, ev *slo.Evaluator, s *metrics.Summary, format string) error {
	rep := judgeSummary(o, ev, s)
	if err := renderReport(env.Stdout, rep, format); err != nil {
		return err
	}
	if !rep.Verdict.Holds {
		return unmet(o, rep.Verdict)
	}
	return nil
}

// judgeSummary judges the evaluator's records, summarised in s, against o.
func judgeSummary(o *slo.Objective, ev *slo.Evaluator, s *metrics.Summary) *slo.Report {
	// The records say which loads were measured; the objective keeps its
	// target (when it names one) and its SLOs.
	seen := map[record.Load]int{}
	listed := map[record.Load]bool{} // a load once, whatever the workload cells
	o.Load.Concurrency, o.Load.Rate = nil, nil
	for _, p := range s.Points {
		bare := p.Load
		bare.Workload = ""
		if seen[p.Load]++; listed[bare] {
			continue
		}
		listed[bare] = true
		if p.Load.Rate > 0 {
			o.Load.Rate, o.Load.MaxConcurrency = append(o.Load.Rate, p.Load.Rate), p.Load.MaxConcurrency
		} else {
			o.Load.Concurrency = append(o.Load.Concurrency, p.Load.Concurrency)
		}
	}
	opts := slo.Options{Seed: 1}
	for _, n := range seen {
		opts.Intervals = opts.Intervals || n > 1
	}
	var server map[record.ServerKey]string
	if s.Run != nil {
		server = s.Run.Target.Server
		opts.Seed = s.Run.Seed
	}
	rep := &slo.Report{Objective: o, Summary: s}
	ev.Qualify(s.Points)
	rep.Verdict = slo.Judge(o, ev.Evaluate(o.Checks(), opts), nil, server)
	return rep
}

// loadSummary reads records from a run directory, a file or stdin and
// summarises them; run.json is used for context when it sits beside them.
// Unless strict, damaged lines are skipped with a warning on stderr.
func loadSummary(env *Env, arg string, strict bool, slice sliceFlag, observe func(*record.Record)) (*metrics.Summary, error) {
	return loadSummarySampled(env, arg, strict, slice, observe, nil)
}

// loadSummarySampled is loadSummary that also hands the run's telemetry
// samples (telemetry.jsonl, when the run has one) to sampled.
func loadSummarySampled(env *Env, arg string, strict bool, slice sliceFlag, observe func(*record.Record), sampled func([]telemetry.Sample)) (*metrics.Summary, error) {
	var r io.Reader = env.Stdin
	var run *record.Run
	name, dir := "standard input", ""
	if arg != "" && arg != "-" {
		const hint = "servebench report runs/a (a directory written by servebench run --out)"
		path := arg
		st, err := os.Stat(arg)
		if err != nil {
			return nil, &Error{Err: err, Hint: hint, Code: ExitFailure}
		}
		if st.IsDir() {
			path, dir = bench.RecordsPath(arg), arg
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, &Error{Err: err, Hint: hint, Code: ExitFailure}
		}
		defer f.Close()
		r, name = f, path
		runPath := filepath.Join(filepath.Dir(path), bench.RunFile)
		run, err = record.ReadRun(runPath)
		switch {
		case err == nil:
			dir = filepath.Dir(path) // a records file inside a run directory
		case errors.Is(err, os.ErrNotExist):
			run = nil // records suffice
		case errors.Is(err, record.ErrRunDamaged):
			dir = filepath.Dir(path)
			run = recoverRun(env, dir, err)
		default:
			return nil, err
		}
	}
	// The run's own slices unless --slice asks for others.
	agg := metrics.Aggregator{Slice: run.Slice()}
	if slice.set {
		agg.Slice = slice.d
	}
	agg.FromRun(run)
	// One run's records file holds them in the order they ended; a merged
	// run's holds its workers' one after the other.
	agg.Ordered = run != nil && len(run.Workers) == 0
	rd := record.NewReader(r)
	if !strict {
		rd.SkipDamaged()
	}
	n := 0
	var events []telemetry.Sample // what the records stand for on the timeline
	for rd.Next() {
		if e, ok := telemetry.RecordEvent(rd.Record()); ok {
			events = append(events, e)
		}
		rec := rd.Record().ModelTime(run.Scale()) // a sped-up simulator's records, in model time
		agg.Add(rec)
		// A point measured again is judged by the later one, as run did.
		if observe != nil && !run.Superseded(rec.Point) {
			observe(rec)
		}
		n++
	}
	if err := rd.Err(); err != nil {
		hint := ""
		var le *record.LineError
		if errors.As(err, &le) {
			hint = "without --strict, report skips damaged lines with a warning"
		}
		return nil, &Error{Err: fmt.Errorf("%s: %w", name, err), Hint: hint, Code: ExitFailure}
	}
	warnDamaged(env, name, rd.Damaged())
	warnDuplicates(env, name, rd.Duplicates())
	if dir != "" {
		// a damaged run.json rebuilt, a killed run's last point added
		run = rd.Complete(run)
	}
	if n == 0 {
		return nil, &Error{Err: fmt.Errorf("%s holds no records", name), Hint: "servebench run --out DIR writes DIR/records.jsonl", Code: ExitFailure}
	}
	unfinished := dir != "" && !exists(filepath.Join(dir, bench.SummaryFile))
	stopped := run != nil && run.Stopped != "" // it says why it ended
	if unfinished && run != nil && !stopped {
		run.Interrupted = true
	}
	s := metrics.Summarize(run, &agg)
	if run != nil && len(run.Workers) > 0 {
		// A merged sharded run (report --out): its workers' warnings again.
		s.Warnings = append(shard.Warnings(run), s.Warnings...)
	}
	if dir != "" {
		if err := addTelemetry(env, s, dir, events, sampled); err != nil {
			return nil, err
		}
	}
	if unfinished && !stopped {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s has no %s: the run was interrupted before it finished (killed, or a second Ctrl-C); this report is rebuilt from the %d records it wrote", dir, bench.SummaryFile, n))
	}
	return s, nil
}

// maxDamagedLines is how many damaged lines a warning names; the rest are
// counted.
const maxDamagedLines = 5

// warnDamaged names the damaged lines a lenient read passed over.
func warnDamaged(env *Env, name string, damaged []*record.LineError) {
	if len(damaged) == 0 {
		return
	}
	lines := make([]string, 0, maxDamagedLines)
	for _, d := range damaged[:min(len(damaged), maxDamagedLines)] {
		lines = append(lines, strconv.Itoa(d.Line))
	}
	more := ""
	if len(damaged) > maxDamagedLines {
		more = fmt.Sprintf(" and %d more", len(damaged)-maxDamagedLines)
	}
	fmt.Fprintf(env.Stderr, "warning: %s: skipped %d damaged line(s), not counted: line %s%s (first: %v); --strict refuses the file\n",
		name, len(damaged), strings.Join(lines, ", "), more, damaged[0].Err)
}

// recoverRun is the run of a directory whose run.json is damaged: the
// copy summary.json holds when the run finished, else nil, for the records
// to rebuild (record.Reader.Complete).
func recoverRun(env *Env, dir string, damaged error) *record.Run {
	var sum struct {
		Run *record.Run `json:"run"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, bench.SummaryFile)); err == nil && json.Unmarshal(b, &sum) == nil && sum.Run != nil {
		fmt.Fprintf(env.Stderr, "warning: %v: the run is taken from %s instead\n", damaged, bench.SummaryFile)
		return sum.Run
	}
	fmt.Fprintf(env.Stderr, "warning: %v: the run is rebuilt from its records (target, load points); what only run.json held is missing "+
		"(client figures, seed, workload, and the time scale of a sped-up simulator, whose figures are then in its wall time)\n", damaged)
	return nil
}

// warnDuplicates names the records a read dropped because an earlier line
// holds their id.
func warnDuplicates(env *Env, name string, dups []record.Duplicate) {
	if len(dups) == 0 {
		return
	}
	lines := make([]string, 0, maxDamagedLines)
	for _, d := range dups[:min(len(dups), maxDamagedLines)] {
		lines = append(lines, d.String())
	}
	more := ""
	if len(dups) > maxDamagedLines {
		more = fmt.Sprintf(" and %d more", len(dups)-maxDamagedLines)
	}
	fmt.Fprintf(env.Stderr, "warning: %s: dropped %d duplicated record(s), counted once: %s%s repeat an id an earlier line holds\n",
		name, len(dups), strings.Join(lines, ", "), more)
}

// addTelemetry summarises the run directory's telemetry.jsonl, with the
// records' events, into s as run did, and hands its samples to sampled
// (when not nil); a run without the file (sampled
// nothing, or --no-telemetry) has no telemetry. Damaged lines are skipped
// with a warning on stderr.
func addTelemetry(env *Env, s *metrics.Summary, dir string, events []telemetry.Sample, sampled func([]telemetry.Sample)) error {
	samples, damaged, err := readTelemetry(dir)
	if err != nil {
		return err
	}
	if damaged > 0 {
		fmt.Fprintf(env.Stderr, "warning: %s: skipped %d damaged line(s), not counted\n", filepath.Join(dir, telemetry.File), damaged)
	}
	if samples == nil {
		return nil
	}
	if sampled != nil {
		sampled(samples)
	}
	all := append(slices.Clip(samples), events...) // sampled keeps samples in the file's order
	slices.SortStableFunc(all, func(a, b telemetry.Sample) int { return cmp.Compare(a.TNS, b.TNS) })
	s.AddTelemetry(all)
	return nil
}

// readTelemetry reads a run directory's telemetry.jsonl: no samples and
// no error when the run has none.
func readTelemetry(dir string) (samples []telemetry.Sample, damaged int, err error) {
	path := filepath.Join(dir, telemetry.File)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, &Error{Err: err, Code: ExitFailure}
	}
	defer f.Close()
	samples, damaged, err = telemetry.ReadSamples(f)
	if err != nil {
		return nil, 0, &Error{Err: fmt.Errorf("%s: %w", path, err), Code: ExitFailure}
	}
	return samples, damaged, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readRun reads run.json; a missing file is no error (records suffice).
func readRun(path string) (*record.Run, error) {
	run, err := record.ReadRun(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return run, err
}
