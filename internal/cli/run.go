package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/workload"
)

const runUsage = `
Usage: servebench run [flags]

Measures a server under one or more load points and prints one row per point.
Without --url it starts the built-in simulated server and measures that.

Examples:
  servebench run
  servebench run --url http://127.0.0.1:8000 --model meta-llama/Llama-3.1-8B-Instruct \
      --concurrency 1,2,4,8,16 --requests 100 --prompt-tokens 512 --output-tokens 128 --out runs/a
  servebench run --url http://127.0.0.1:11434 --api ollama-chat --model llama3.1 --rate 0.5,1,2 --duration 60s
  servebench run --prompt-tokens 128 --prompt-tokens 2048 --output-tokens 64 --output-tokens 512 --concurrency 1,4,16
  servebench run --url https://llm.example.com --api-key-env MY_KEY --header 'X-Team: infra' --json
  servebench run --url http://127.0.0.1:8000 --model M --concurrency 1000 --duration 1h --out runs/soak --compress gzip
  servebench run --objective chat --url http://127.0.0.1:8000 --model M --find-capacity
  servebench run --url http://127.0.0.1:8000 --model M --concurrency 8 --slo 'ttft p95 <= 1.5s' --slo 'speed p95 >= 20 tok/s'
  servebench run --live --concurrency 1,4,16 --duration 60s    # a live view of the run in a browser
  servebench run --url http://127.0.0.1:8000 --model M --trace conv.jsonl --slo 'ttft p95 <= 2s' --find-capacity

Exit codes: 0 success (with an objective: it holds at its target load), 1 failure, 2 usage error,
3 the objective does not hold, 4 INCONCLUSIVE: the evidence cannot say (the simulator fell behind
its clock, the client saturated, too few requests for a percentile judged; the reason is printed),
130 interrupted (what completed is still written).
`

// defaultAPIKeyEnv names the variable run reads the API key from, unless
// --api-key-env names another (bench.Default* are run's other defaults).
const defaultAPIKeyEnv = "SERVEBENCH_API_KEY"

// runFlags are run's options as parsed from the command line.
type runFlags struct {
	url, model, api, apiKeyEnv, caCert string
	apiGiven                           bool // --api was given: a --url endpoint path does not choose it
	insecure, noPreflight              bool
	headers                            headerFlag
	timeout, firstTokenTimeout, dur    time.Duration
	grace                              time.Duration
	concurrency, rate, arrival         string
	burstiness                         float64
	maxConcurrency, requests           int
	cpus                               int // GOMAXPROCS for the run (0: Go's default)
	warmup                             warmupFlag
	promptTokens, outputTokens         lengthsFlag // repeated: a workload matrix (run_workload.go)
	tokenizer                          string
	ignoreEOS                          bool
	workload                           workload.Spec // dataset, sessions, prefixes, long context (run_workload.go)
	seed                               uint64
	out, format, simConfig             string
	compress                           string // records compressed: "gzip", or "none"
	jsonOut                            bool
	slice                              sliceFlag      // sustained runs (run_slice.go)
	slo                                sloFlags       // objective, verdicts, capacity (run_slo.go)
	tel                                telemetryFlags // what is sampled beside the requests (run_telemetry.go)
	shard                              shardFlags     // one worker of several, start marks (run_shard.go)
	hist                               historyFlags   // the run history (run_history.go)
	trace                              traceFlags     // trace replay (run_trace.go)
	live                               liveFlags      // the live view (run_live.go)
}

func (f *runFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "server base URL, e.g. http://127.0.0.1:8000 (empty: the built-in simulated server)")
	fs.StringVar(&f.model, "model", "", "model name sent with each request")
	fs.StringVar(&f.api, "api", record.APIOpenAIChat, "API: "+strings.Join(record.APIs(), ", "))
	fs.StringVar(&f.apiKeyEnv, "api-key-env", defaultAPIKeyEnv, "environment variable holding the API key (sent as a Bearer token, never written anywhere)")
	fs.Var(&f.headers, "header", "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&f.caCert, "ca-cert", "", "PEM file of CA certificates to trust for https")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	fs.BoolVar(&f.noPreflight, "no-preflight", false, "skip the check, before any load, that the server answers, accepts the credentials and serves --model")
	fs.DurationVar(&f.timeout, "timeout", backend.DefaultTimeout, "per-request timeout")
	fs.DurationVar(&f.firstTokenTimeout, "first-token-timeout", 0, "fail a request with no token after this long (0: only --timeout)")
	fs.StringVar(&f.concurrency, "concurrency", "", "closed-loop load points: comma-separated virtual-user counts (default "+joinInts(bench.DefaultConcurrency())+")")
	fs.StringVar(&f.rate, "rate", "", "open-loop load points: comma-separated request rates per second")
	fs.StringVar(&f.arrival, "arrival", load.ArrivalPoisson, "open-loop arrivals: poisson, constant or gamma")
	fs.Float64Var(&f.burstiness, "burstiness", 1, "gamma arrivals: shape (1 = Poisson, below 1 burstier)")
	fs.IntVar(&f.maxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight (0: none)")
	fs.IntVar(&f.requests, "requests", 0, fmt.Sprintf("measured requests per load point (default %d when no --duration)", bench.DefaultRequests))
	fs.DurationVar(&f.dur, "duration", 0, "measured sending time per load point, e.g. 60s")
	fs.Var(&f.warmup, "warmup", "warm-up per load point: requests (5) or time (10s), excluded from the steady state")
	f.slice.define(fs)
	fs.Uint64Var(&f.seed, "seed", 1, "seed for lengths, prompts and arrival times")
	fs.StringVar(&f.out, "out", "", "directory for records.jsonl, run.json and summary.json (must not hold a run already)")
	fs.StringVar(&f.compress, "compress", "none", "write the records compressed: gzip (records.jsonl.gz, read by every command as records.jsonl is) or none")
	fs.BoolVar(&f.jsonOut, "json", false, "print the summary JSON on stdout instead of the table")
	fs.StringVar(&f.format, "format", "text", "table format: text, markdown, csv, json")
	fs.DurationVar(&f.grace, "grace", load.DefaultGrace, "after Ctrl-C, how long in-flight requests may finish before they are cancelled")
	fs.IntVar(&f.cpus, "cpus", 0, "CPUs the client runs on at once (GOMAXPROCS; 0: Go's default, every CPU this process may use); fewer leave more to a server on the same machine")
	f.defineWorkload(fs)
	fs.StringVar(&f.simConfig, "sim-config", "", "YAML file configuring the built-in simulated server (see servebench sim --print-config)")
	f.defineSLO(fs)
	f.defineTelemetry(fs)
	f.shard.define(fs)
	f.defineHistory(fs)
	f.trace.define(fs)
	f.defineLive(fs)
}

// limitCPUs is bench.LimitCPUs, its error in the terms of --cpus.
func limitCPUs(n int) (restore func(), err error) {
	if restore, err = bench.LimitCPUs(n); err != nil {
		return nil, usagef("servebench run --cpus 1", "--cpus must be between 1 and the %d CPUs of this machine, or 0 for all (got %d)", runtime.NumCPU(), n)
	}
	return restore, nil
}

func runCmd(ctx context.Context, env *Env, args []string) error {
	var f runFlags
	fs := newFlagSet(env, "run", runUsage)
	f.define(fs)
	if err := parseFlags(fs, liveArgs(args)); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("servebench run -h", "unexpected argument %q", fs.Arg(0))
	}
	f.apiGiven = flagSet(fs, "api")
	if err := f.shard.check(&f); err != nil {
		return err
	}
	if f.compress != "none" && f.compress != bench.CompressGzip {
		return usagef("servebench run --out runs/a --compress gzip", "--compress must be gzip or none (got %q)", f.compress)
	}
	restore, err := limitCPUs(f.cpus)
	if err != nil {
		return err
	}
	defer restore()
	f.hist.args = append([]string{"run"}, args...)
	var o *slo.Objective
	if f.slo.active() {
		if o, err = f.objective(fs); err != nil {
			return err
		}
	}
	plan, err := f.plan(o)
	if err != nil {
		return err
	}
	if err := f.shard.checkPoints(plan.Points); err != nil {
		return err
	}
	render, err := formatRenderer("run", f.format)
	if err != nil {
		return err
	}
	if err := benchError(rundir.Check(f.out)); err != nil {
		return err
	}
	if err := f.live.start(env); err != nil {
		return err
	}
	defer f.live.close(ctx, env, f.out)
	m, err := f.measurement(env, plan)
	if err != nil {
		return err
	}
	m.Objective = o
	got, err := bench.Measure(ctx, m)
	err = f.measureError(err)
	switch {
	case got == nil || got.Result == nil:
		return err
	case o != nil:
		return f.judged(ctx, env, o, got, err)
	case f.jsonOut:
		render = report.JSON
	}
	res := got.Result
	if rerr := render(env.Stdout, res.Summary); rerr != nil && err == nil {
		err = rerr
	}
	f.remember(ctx, env, res.Summary, nil, nil)
	writeRunFiles(env, f.out, res)
	if err != nil {
		return err
	}
	if res.Interrupted {
		return &Error{Err: errors.New("interrupted: the summary covers the requests that completed"), Code: ExitInterrupted}
	}
	return allFailed(res.Summary)
}

// allFailed is the exit-1 error of a run in which every measured request
// failed, or nil: its files are written, but it measured nothing about the
// server, and a script must not take it for a benchmark.
func allFailed(s *metrics.Summary) error {
	if !s.AllFailed() {
		return nil
	}
	all, sample := s.Errors()
	msg := fmt.Sprintf("every request failed (%s)", metrics.ErrorCounts(all))
	if sample != "" {
		msg += "; first " + metrics.ErrorClasses(all)[0] + " error: " + sample
	}
	return &Error{Err: errors.New(msg), Hint: failureHints[record.Cause(all)], Code: ExitFailure}
}

// failureHints say what to do about a run whose requests failed, by the
// kind of failure that explains them (record.Cause): a failing server is
// fixed first; an overloaded one calls for less load or more time.
var failureHints = map[string]string{
	record.KindFailing:    hintFailing,
	record.KindOverloaded: "the server did not keep up: lower the load (--concurrency, --rate), or raise --timeout or --first-token-timeout; the errors by class are listed under the table",
	record.KindOther:      "see the server's log, and check --url, --model and --api; the errors by class are listed under the table",
}

// hintFailing is the hint of a server failing for reasons no load explains.
const hintFailing = "check --url, --model, --api and the credentials (--api-key-env, --header); the errors by class are listed under the table"

// ExitInterrupted is the exit code of a run stopped by Ctrl-C or SIGTERM
// (128 + SIGINT, as shells report it).
const ExitInterrupted = 130

// hintClosedOrOpen is the hint of slo.ErrClosedAndOpen.
const hintClosedOrOpen = "servebench run --concurrency 1,4  or  --rate 1,2"

// plan checks the load and workload flags and builds the load points:
// from the flags, or, with an objective (resolved from them by
// f.objective), from its load and workload.
func (f *runFlags) plan(o *slo.Objective) (*bench.Plan, error) {
	if f.trace.o.Path != "" {
		return f.tracePlan(o)
	}
	if f.concurrency != "" && f.rate != "" {
		return nil, usagef(hintClosedOrOpen, "%v", slo.ErrClosedAndOpen)
	}
	if err := f.checkAmounts(); err != nil {
		return nil, err
	}
	spec := bench.PlanSpec{Workload: f.workload, Prompts: f.promptTokens.vals, Outputs: f.outputTokens.vals, Seed: f.seed,
		Point: load.Point{Requests: f.requests, Duration: f.dur, WarmupRequests: f.warmup.requests, WarmupDuration: f.warmup.duration}}
	if o != nil {
		spec.ForObjective(o)
	}
	var err error
	if spec.Slice, err = f.slice.resolve(spec.Point.Duration); err != nil {
		return nil, err
	}
	if spec.Point.Arrival, err = load.ParseArrival(f.arrival, f.burstiness); err != nil {
		return nil, usagef("servebench run --rate 2 --arrival gamma --burstiness 0.5", "--arrival/--burstiness: %v", err)
	}
	if o == nil {
		if spec.Loads, err = f.loads(); err != nil {
			return nil, err
		}
	}
	p, err := bench.NewPlan(spec)
	return p, specUsage(err)
}

// checkAmounts refuses negative counts and durations (the flag package
// takes them), naming the flag and the value, before any server is asked.
func (f *runFlags) checkAmounts() error {
	for _, n := range []struct {
		name    string
		v       int
		example string
	}{{"requests", f.requests, "100"}, {"max-concurrency", f.maxConcurrency, "8 (0: no cap)"}} {
		if n.v < 0 {
			return usagef("servebench run --"+n.name+" "+n.example, "--%s %d: must not be negative", n.name, n.v)
		}
	}
	for _, d := range []struct {
		name    string
		v       time.Duration
		example string
	}{
		{"duration", f.dur, "60s"},
		{"timeout", f.timeout, "10m (0: the default, " + backend.DefaultTimeout.String() + ")"},
		{"first-token-timeout", f.firstTokenTimeout, "30s (0: none)"},
		{"grace", f.grace, "10s (0: the default, " + load.DefaultGrace.String() + ")"},
	} {
		if d.v < 0 {
			return usagef("servebench run --"+d.name+" "+d.example, "--%s %v: must not be negative", d.name, d.v)
		}
	}
	return f.tel.checkInterval()
}

// loads are the load levels of --concurrency or --rate.
func (f *runFlags) loads() ([]record.Load, error) {
	if f.rate != "" {
		rates, err := floatList("rate", f.rate)
		return bench.Levels(nil, rates, f.maxConcurrency), err
	}
	if f.maxConcurrency > 0 {
		return nil, usagef("servebench run --rate 2 --max-concurrency 8", "--max-concurrency caps an open loop; use it with --rate")
	}
	if f.concurrency == "" {
		return nil, nil // bench.DefaultConcurrency
	}
	conc, err := intList("concurrency", f.concurrency)
	return bench.Levels(conc, nil, 0), err
}
