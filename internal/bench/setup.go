package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
	"github.com/servebench/servebench/internal/tokenize"
	"github.com/servebench/servebench/internal/workload"
)

// Setup is a run as plain values: the server, how requests are sent and
// sized, the workload and the load points. A command line parses its flags
// into one; NewConfig assembles the run from it.
type Setup struct {
	Target *backend.Target
	API    string
	Model  string
	// ModelPicked: Model was not given but is the server's only one.
	ModelPicked bool
	Simulated   bool                        // the built-in simulator; run.json names it builtin:sim
	Server      map[record.ServerKey]string // what the server said about itself (backend.Describe)
	// SimClockLost, for the built-in simulator, reads the time it has
	// skipped so far (sim.Server.ClockLost): each point records what it
	// skipped from the point's start to its end.
	SimClockLost func() time.Duration
	// Timeout and FirstTokenTimeout are per request, in model time.
	Timeout, FirstTokenTimeout time.Duration
	IgnoreEOS                  bool
	// Tokenizer sizes prompts: auto (the server's /tokenize, else
	// tiktoken), server, cl100k_base, o200k_base, or a tokenizer.json path.
	Tokenizer string
	// Prompt and Output are the parsed lengths; Workload is the rest of
	// the workload, its PromptTokens and OutputTokens as given.
	Prompt, Output workload.LengthDist
	Workload       workload.Spec
	// Trace, when set, is replayed instead of Workload's lengths: its
	// point's source reads it (TracePoint makes the point).
	Trace *workload.Trace
	// Matrix, when it has more than one cell, replaces Workload's lengths:
	// each cell is a workload of its own, with a source per point, and
	// each point's Load.Workload names its cell.
	Matrix []workload.Lengths
	Seed   uint64
	Points []load.Point
	// Slice cuts each point into slices of this much model time (0: none).
	Slice  time.Duration
	OutDir string
	// Compress is CompressGzip to write the records compressed, or empty.
	Compress string
	Grace    time.Duration
	Progress io.Writer // live progress (a terminal), or nil
	// ProgressLines: Progress is a log; it gets a line every 10 s.
	ProgressLines bool
	Version       string // the tool's, for run.json
	// Labels and Args go to run.json as they are (record.Run): the
	// caller has redacted the credentials from Args.
	Labels map[string]string
	Args   []string
	// Telemetry says what to sample beside the requests; nil samples
	// nothing (--no-telemetry). Its Target is the run's.
	Telemetry *telemetry.Options
	// Shard runs one worker's part of the load (zero: all of it); StartAt
	// and StartEvery are the points' start marks (shard.go).
	Shard      load.Shard
	StartAt    time.Time
	StartEvery time.Duration
}

// SetupError is a setting of a Setup that cannot be used; Setting is its
// field's name.
type SetupError struct {
	Setting string
	Err     error
}

func (e *SetupError) Error() string { return strings.ToLower(e.Setting) + ": " + e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Flag is the servebench run flag that sets the setting; Hint an example
// of it; Usage says the setting was given wrong.
func (e *SetupError) Flag() string { return setupFlags[e.Setting].flag }
func (e *SetupError) Hint() string { return setupFlags[e.Setting].hint }
func (e *SetupError) Usage() bool  { return true }

var setupFlags = map[string]struct{ flag, hint string }{
	"URL":        {"--url", "servebench run --url http://127.0.0.1:8000"},
	"API":        {"--api", "servebench run --url http://127.0.0.1:8000 --api openai-chat --model NAME"},
	"ServerPID":  {"--server-pid", "servebench run --server-pid $(pgrep -f NAME) (the running server's process id)"},
	"Tokenizer":  {"--tokenizer", "servebench run --tokenizer auto (or cl100k_base, o200k_base, path/to/tokenizer.json)"},
	"StartEvery": {"--start-every", "servebench run --start-at TIME --start-every 2m (or bound every point with --duration)"},
	"Trace":      {"--trace", "servebench run --trace FILE --trace-max 100 (trace replay: docs/WORKLOADS.md)"},
}

// ErrNoServerTokenizer: Tokenizer "server" and the server has no usable
// /tokenize endpoint.
var ErrNoServerTokenizer = errors.New("the server has no /tokenize endpoint")

// NewConfig assembles a run: the client, the counter prompts are sized
// with, each point's workload source and the run's header.
func NewConfig(ctx context.Context, s Setup) (Config, error) {
	scale := timeScale(s.Server)
	// Telemetry's discovery (the server's metrics, its process through
	// /proc, NVML) and the tokenizer's (a /tokenize probe, the local
	// vocabulary) are independent and take tens of ms each: side by side,
	// the first request goes out that much sooner. An error of the
	// tokenizer's still comes first, as when they ran one after the other.
	telc := make(chan telemetryResult, 1)
	go func() {
		tel, err := newTelemetry(ctx, s, scale)
		telc <- telemetryResult{tel, err}
	}()
	cfg, err := newConfig(ctx, s, scale)
	tr := <-telc
	if err == nil {
		err = tr.err
	}
	if err != nil {
		tr.tel.close()
		return Config{}, err
	}
	cfg.Telemetry = tr.tel
	return cfg, nil
}

// telemetryResult is newTelemetry's answer, from its goroutine.
type telemetryResult struct {
	tel *Telemetry
	err error
}

// newConfig is NewConfig but for the telemetry.
func newConfig(ctx context.Context, s Setup, scale float64) (Config, error) {
	promptCounter, local, err := counters(ctx, s)
	if err != nil {
		return Config{}, err
	}
	client, err := backend.New(backend.Options{
		Target: s.Target, API: s.API, Model: s.Model,
		Timeout: wallTime(s.Timeout, scale), FirstTokenTimeout: wallTime(s.FirstTokenTimeout, scale),
		IgnoreEOS: s.IgnoreEOS, Counter: localCounter{local},
	})
	if err != nil {
		return Config{}, &SetupError{Setting: "API", Err: err}
	}
	spec := s.Workload
	spec.ThinkTime = wallTime(spec.ThinkTime, scale)
	chat := record.ChatAPI(s.API)
	seed := shardSeed(s.Seed, s.Shard)
	env := workload.Env{Synth: tokenize.NewSynth(promptCounter, seed), Counter: promptCounter, Chat: chat, Seed: seed}
	sources, err := newSources(spec, s.Matrix, env)
	if err != nil {
		return Config{}, err
	}
	every, err := StartEvery(s, scale)
	if err != nil {
		return Config{}, err
	}
	url := s.Target.Base()
	if s.Simulated {
		url = "builtin:sim"
	}
	cfg := Config{
		Client:    client,
		NewSource: sources.source,
		Run: record.Run{
			Schema: record.RunSchema, Version: s.Version, TimeScale: scale,
			Target:       record.Target{URL: url, API: s.API, Model: s.Model, ModelPicked: s.ModelPicked, Simulated: s.Simulated, Server: s.Server},
			PromptTokens: s.Prompt.String(), OutputTokens: s.Output.String(), Workloads: sources.cells,
			Seed: s.Seed, IgnoreEOS: s.IgnoreEOS, Tokenizer: promptCounter.Name(), Workload: workloadRecord(s.Workload, len(sources.cells) > 0),
			SliceS: s.Slice.Seconds(), Shard: runShard(s.Shard), StartAt: startAtRecord(s.StartAt), StartEveryS: every.Seconds(),
			Labels: s.Labels, Args: s.Args,
		},
		Points:           s.Points,
		OutDir:           s.OutDir,
		Compress:         s.Compress,
		Grace:            s.Grace,
		Progress:         s.Progress,
		ProgressLines:    s.ProgressLines,
		PromptTokensMean: sources.meanPrompt(s.Prompt),
		SizedByServer:    promptCounter.Source() == record.SourceServer,
		Shard:            s.Shard,
		StartAt:          s.StartAt,
		StartEvery:       every,
		SimClockLost:     s.SimClockLost,
	}.matrixLengths()
	if s.Trace != nil {
		return traceConfig(cfg, s, promptCounter, env)
	}
	return cfg, nil
}

// workloadRecord is the workload as run.json keeps it: the Spec when it
// asks for more than two length distributions, else nothing (the lengths
// are in run.json already; a matrix's are its cells').
func workloadRecord(spec workload.Spec, matrix bool) any {
	if matrix {
		// the cells' lengths are in run.json's workloads
		spec.PromptTokens, spec.OutputTokens = "", ""
	}
	bare := workload.Spec{PromptTokens: spec.PromptTokens, OutputTokens: spec.OutputTokens}
	if spec == bare {
		return nil
	}
	return spec
}

// timeScale is how many times faster than model time the target runs (the
// built-in simulator, or a server announcing backend.TimeScaleHeader), as
// its self-description says; 0 for a real-time one, so run.json leaves it
// out.
func timeScale(server map[record.ServerKey]string) float64 {
	v, err := strconv.ParseFloat(server[record.ServerTimeScale], 64)
	if err != nil || !(v > 0) || v == 1 {
		return 0
	}
	return v
}

// wallTime is a model-time duration in the wall time of a target running
// scale times faster.
func wallTime(d time.Duration, scale float64) time.Duration {
	if scale <= 0 {
		return d
	}
	return time.Duration(float64(d) / scale)
}

// localCounter adapts a tokenize.Counter that never fails (a local one) to
// the backend's fallback counter.
type localCounter struct{ c tokenize.Counter }

func (l localCounter) Count(text string) int {
	n, _ := l.c.Count(context.Background(), text)
	return n
}

// tokenizerProbeTimeout bounds the search for the server's /tokenize.
const tokenizerProbeTimeout = 10 * time.Second

// counters returns the counter prompts are sized with and the local one the
// backend falls back to when a server reports no usage.
func counters(ctx context.Context, s Setup) (prompt, local tokenize.Counter, err error) {
	local, err = tokenize.NewTiktoken("cl100k_base")
	if err != nil {
		return nil, nil, err
	}
	switch spec := s.Tokenizer; {
	case spec == "cl100k_base" || spec == "o200k_base":
		c, err := tokenize.NewTiktoken(spec)
		return c, c, err
	case strings.HasSuffix(spec, ".json"):
		h, err := tokenize.LoadHF(spec)
		if err != nil {
			return nil, nil, &SetupError{Setting: "Tokenizer", Err: err}
		}
		return h, h, nil
	case spec == "auto" || spec == "server":
		pctx, cancel := context.WithTimeout(ctx, tokenizerProbeTimeout)
		defer cancel()
		srv, err := tokenize.Detect(pctx, s.Target, s.Model)
		if srv != nil && err == nil {
			return srv, local, nil
		}
		if spec == "server" {
			if err == nil {
				return nil, nil, ErrNoServerTokenizer
			}
			return nil, nil, fmt.Errorf("%w: %w", ErrNoServerTokenizer, err)
		}
		return local, local, nil
	}
	return nil, nil, &SetupError{Setting: "Tokenizer", Err: fmt.Errorf("%q: want auto, server, cl100k_base, o200k_base or a tokenizer.json path", s.Tokenizer)}
}
