package servebench

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

// Benchmark is what Run measures: where, what is sent, at which loads and
// for how long. The zero value measures the built-in simulator with
// servebench's defaults.
type Benchmark struct {
	Target   Target
	Workload Workload
	Loads    Loads
	Options  Options
}

// Target is the server measured. The zero value starts the built-in
// simulated server on a loopback port for the run and stops it after.
type Target struct {
	// URL is the server's root, e.g. http://127.0.0.1:8000; empty: the
	// built-in simulator.
	URL string
	// API is the wire API: openai-chat, openai-completions, ollama-chat or
	// ollama-generate; empty: the one URL's endpoint path names, else
	// openai-chat.
	API string
	// Model is sent with each request; empty: the server's only model
	// (asked before any load), or the simulator's.
	Model string
	// APIKey is sent as a Bearer token; Header with every request.
	APIKey string
	Header http.Header
	// TLS configures https; nil: the system's defaults.
	TLS *tls.Config
	// NoPreflight skips the check, before any load, that the server
	// answers, accepts the credentials and serves Model.
	NoPreflight bool
	// Sim configures the built-in simulator when URL is empty; nil: its
	// defaults (DefaultSimConfig).
	Sim *SimConfig
}

// SimConfig configures the built-in simulated server: the model, device
// and engine it simulates, and TimeScale, how many times faster than
// model time it runs (every figure is reported in model time). Its YAML
// form is servebench sim --print-config.
type SimConfig = sim.Config

// DefaultSimConfig returns the simulator's defaults: a Llama-3.1-8B-like
// model on one H100, ten times faster than real time.
func DefaultSimConfig() SimConfig { return sim.DefaultConfig() }

// Workload is what each request sends. Lengths are a count ("512") or a
// distribution ("uniform:128,1024", "normal:512,64",
// "lognormal:1024,256"), as servebench run --prompt-tokens takes them.
type Workload struct {
	// PromptTokens is the prompt length; empty: 512.
	PromptTokens string
	// OutputTokens is the output length (max_tokens); empty: 128.
	OutputTokens string
	// Tokenizer sizes the prompts: auto (the server's /tokenize, else
	// tiktoken), server, cl100k_base, o200k_base, or a tokenizer.json
	// path; empty: auto.
	Tokenizer string
	// LetEOS lets the server stop before OutputTokens; by default it is
	// asked to generate exactly OutputTokens where it can.
	LetEOS bool
}

// Loads are the load points, measured one after the other: closed-loop
// virtual users, or open-loop request rates. Zero Loads are
// concurrencies 1, 2, 4, 8 and 16.
type Loads struct {
	// Concurrency are closed-loop loads: users each sending a request as
	// soon as their previous one ended.
	Concurrency []int
	// Rate are open-loop loads in requests per second, arriving as a
	// Poisson process (Arrival "constant" spaces them evenly); exclusive
	// with Concurrency.
	Rate    []float64
	Arrival string
	// MaxConcurrency caps an open loop's requests in flight (0: none).
	MaxConcurrency int
}

// Options say how long each load runs and where the records go.
type Options struct {
	// Requests measured per load; with Duration, whichever comes first
	// ends it. Both zero: 100 requests.
	Requests int
	Duration time.Duration
	// WarmupRequests and WarmupDuration are excluded from the figures at
	// the start of each load.
	WarmupRequests int
	WarmupDuration time.Duration
	// Seed drives lengths, prompts and arrival times; 0: 1, as the
	// command's default.
	Seed uint64
	// Timeout bounds each request (0: 10 minutes); FirstTokenTimeout its
	// first token (0: none).
	Timeout, FirstTokenTimeout time.Duration
	// OutDir receives records.jsonl, run.json and summary.json
	// (docs/OUTPUT.md); it must not hold a run. Empty: kept in memory.
	OutDir string
	// Progress, when set, receives a progress line every 10 s.
	Progress io.Writer
	// NoTelemetry samples nothing beside the requests; by default the
	// server's metrics, its host and the client are sampled, and the
	// simulator's clock, without which a point where it fell behind
	// cannot be told invalid.
	NoTelemetry bool
	// Notes, when set, receives what servebench says about the target
	// (a model picked, an endpoint path in URL) and about what it cannot
	// sample, one line each.
	Notes io.Writer
}

// Result is a finished run.
type Result struct {
	// Summary is every figure of summary.json: one entry per load with
	// its latency distributions, throughputs, errors, validity and
	// warnings.
	Summary *Summary
	// Records counts the records written (of Open: read, but those of a
	// load a capacity search measured again); Interrupted says the context
	// was cancelled before the last load ended (of Open: the run was
	// killed, or stopped by a signal).
	Records     int
	Interrupted bool
	// Warnings of Open say what reading the run directory passed over: a
	// damaged line skipped, a damaged run.json rebuilt.
	Warnings []string
	// eval holds the records by load, for Compare's intervals; name and
	// dirs, of Open, are the runs as named and their directories resolved.
	eval *slo.Evaluator
	name string
	dirs []string
}

// WriteText writes the summary as servebench run prints it: a row per
// load, then the warnings.
func (r *Result) WriteText(w io.Writer) error { return report.Text(w, r.Summary) }

// Types of a Summary, from summary.json (docs/OUTPUT.md): the run, one
// PointSummary per load, and the distributions of each metric (in model
// time, milliseconds or tokens per second as docs/METRICS.md defines).
type (
	Summary      = metrics.Summary
	PointSummary = metrics.PointSummary
	Dist         = stats.Dist
	Load         = record.Load
)

// Run measures the benchmark's loads in order and returns their summary.
// When ctx is cancelled it stops and returns what completed, with
// Interrupted set, and ctx's error.
func Run(ctx context.Context, b Benchmark) (*Result, error) {
	m, err := b.measurement()
	if err != nil {
		return nil, err
	}
	got, err := bench.Measure(ctx, m)
	if got == nil || got.Result == nil {
		return nil, err
	}
	if err == nil {
		err = ctx.Err()
	}
	return result(got, m.Eval), err
}

// measurement is the benchmark as bench.Measure takes it, the sequence
// servebench run measures with: open the target, check it, ask it what
// it is, assemble the run on it and measure; its records are kept by
// load for Compare.
func (b Benchmark) measurement() (bench.Measurement, error) {
	s, err := b.setup()
	if err != nil {
		return bench.Measurement{}, err
	}
	l := bench.Launch{NoPreflight: b.Target.NoPreflight, Opened: b.opened, Checked: b.checked,
		Spec: bench.TargetSpec{API: b.Target.API, Model: b.Target.Model, Sim: b.Target.Sim,
			Server: backend.TargetOptions{URL: b.Target.URL, APIKey: b.Target.APIKey, Header: b.Target.Header, TLS: b.Target.TLS}}}
	return bench.Measurement{Launch: l, Setup: func(*bench.Target) (bench.Setup, error) { return s, nil },
		// the records kept for Compare, bounded as servebench compare's
		Eval: &slo.Evaluator{Keep: compare.Keep}, Unsampled: func(notes []string) { b.note(notes...) }}, nil
}

// result is what was measured, as a Result.
func result(got *bench.Measured, ev *slo.Evaluator) *Result {
	res := got.Result
	return &Result{Summary: res.Summary, Records: res.Records, Interrupted: res.Interrupted, eval: ev}
}

// opened notes an endpoint path in Target.URL, which names the API.
func (b Benchmark) opened(t *bench.Target) {
	if a := t.Server.PathAPI(); a != "" {
		b.note(fmt.Sprintf("note: URL ends in the %s endpoint: measuring the server at %s with API %s", a, t.Server.Base(), t.API))
	}
}

// checked notes what the preflight found.
func (b Benchmark) checked(p *backend.Preflight) {
	if p.Note != "" {
		b.note("note: " + p.Note)
	}
	if p.Picked {
		b.note("model: " + p.Model + " (none given; the only model the server serves)")
	}
}

// note writes lines to Options.Notes, when set.
func (b Benchmark) note(lines ...string) {
	if b.Options.Notes == nil {
		return
	}
	for _, l := range lines {
		io.WriteString(b.Options.Notes, l+"\n")
	}
}

// setup is the benchmark as a bench.Setup, but for its target: lengths
// parsed, loads made points, defaults filled in.
func (b Benchmark) setup() (bench.Setup, error) {
	w, o := b.Workload, b.Options
	s := bench.Setup{Tokenizer: cmp.Or(w.Tokenizer, bench.DefaultTokenizer), IgnoreEOS: !w.LetEOS, Seed: cmp.Or(o.Seed, 1),
		Timeout: cmp.Or(o.Timeout, backend.DefaultTimeout), FirstTokenTimeout: o.FirstTokenTimeout,
		OutDir: o.OutDir, Grace: load.DefaultGrace, Progress: o.Progress, ProgressLines: true, Version: bench.RecordedVersion()}
	if !o.NoTelemetry {
		s.Telemetry = &telemetry.Options{}
	}
	base, loads, err := b.points()
	if err != nil {
		return bench.Setup{}, err
	}
	p, err := bench.NewPlan(bench.PlanSpec{Prompts: nonEmpty(w.PromptTokens), Outputs: nonEmpty(w.OutputTokens), Loads: loads, Point: base, Seed: s.Seed})
	if err != nil {
		return bench.Setup{}, err
	}
	p.Apply(&s)
	return s, nil
}

// nonEmpty is the one length given, or none (bench's default).
func nonEmpty(length string) []string {
	if length == "" {
		return nil
	}
	return []string{length}
}

// points are every load's amount and arrivals, and the loads.
func (b Benchmark) points() (load.Point, []record.Load, error) {
	o, l := b.Options, b.Loads
	arrival, err := load.ParseArrival(cmp.Or(l.Arrival, load.ArrivalPoisson), 1)
	if err != nil {
		return load.Point{}, nil, err
	}
	base := load.Point{Requests: o.Requests, Duration: o.Duration, WarmupRequests: o.WarmupRequests,
		WarmupDuration: o.WarmupDuration, Arrival: arrival}
	if len(l.Concurrency) > 0 && len(l.Rate) > 0 {
		return base, nil, errors.New("servebench: Loads: Concurrency and Rate are exclusive")
	}
	conc := l.Concurrency
	if len(conc) == 0 {
		conc = bench.DefaultConcurrency()
	}
	return base, bench.Levels(conc, l.Rate, l.MaxConcurrency), nil
}
