package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/tokenize"
)

// target is the server a run measures: the user's, or an in-process
// simulator started for the run.
type target struct {
	// server is where it is and how to reach it: URL, headers, TLS and
	// the redactor of its credentials, parsed once from the flags.
	server    *backend.Target
	model     string
	simulated bool
	info      map[string]string
	close     func()
}

// startTarget returns the user's server, or starts the simulator when no
// --url was given, after a preflight (unless --no-preflight) that makes
// sure it can be measured.
func startTarget(ctx context.Context, env *Env, f *runFlags) (*target, error) {
	if err := backend.CheckAPI(f.api, "x"); err != nil {
		return nil, usagef("servebench run --api openai-chat", "--api: %v", err)
	}
	t, err := f.openTarget(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := f.preflight(ctx, env, t); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

func (f *runFlags) openTarget(ctx context.Context, env *Env) (*target, error) {
	if f.url != "" {
		if f.simConfig != "" {
			return nil, usagef("servebench run --sim-config sim.yaml (without --url)", "--sim-config configures the built-in simulator; it cannot be used with --url")
		}
		server, err := f.server(env, f.url)
		if err != nil {
			return nil, err
		}
		return &target{server: server, model: f.model, close: server.CloseIdleConnections}, nil
	}
	cfg := sim.DefaultConfig()
	if f.sim != nil {
		cfg = *f.sim
	} else if f.simConfig != "" {
		b, err := os.ReadFile(f.simConfig)
		if err != nil {
			return nil, usagef("servebench sim --print-config > sim.yaml", "--sim-config: %v", err)
		}
		if cfg, err = sim.ParseConfig(b); err != nil {
			return nil, usagef("servebench sim --print-config > sim.yaml", "--sim-config %s: %v", f.simConfig, err)
		}
	}
	srv, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated server: %w", err)
	}
	url, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the simulated server: %w", err)
	}
	server, err := f.server(env, url)
	if err != nil {
		srv.Close()
		return nil, err
	}
	model := f.model
	if model == "" {
		model = cfg.Model.Name
	}
	info := map[string]string{
		"engine": "servebench-sim", "device": cfg.Device.Name,
		backend.InfoTimeScale: strconv.FormatFloat(cfg.TimeScale, 'g', -1, 64),
		"max_num_seqs":        strconv.Itoa(cfg.Engine.MaxNumSeqs),
	}
	return &target{server: server, model: model, simulated: true, info: info,
		close: func() { server.CloseIdleConnections(); srv.Close() }}, nil
}

// preflight checks that the server answers at the URL with the right
// scheme, accepts the credentials and serves the model, before any load:
// a misconfiguration is an error, not a benchmark of failures.
func (f *runFlags) preflight(ctx context.Context, env *Env, t *target) error {
	if f.noPreflight {
		return nil
	}
	p, err := t.server.Preflight(ctx, f.api, t.model)
	var pe *backend.PreflightError
	switch {
	case errors.As(err, &pe):
		return &Error{Err: fmt.Errorf("preflight: %w", err), Hint: preflightHints[pe.Kind], Code: ExitFailure}
	case err != nil:
		return err
	}
	if p.Note != "" {
		fmt.Fprintf(env.Stderr, "note: %s\n", p.Note)
	}
	if p.Picked {
		t.model = p.Model
		fmt.Fprintf(env.Stderr, "model: %s (no --model given; the only model the server serves)\n", p.Model)
	}
	return nil
}

// preflightHints say what to do about each kind of preflight failure.
var preflightHints = map[string]string{
	backend.PreflightDNS:      "check the host name in --url",
	backend.PreflightRefused:  "start the server, or check the host and port in --url",
	backend.PreflightScheme:   "change the scheme of --url as the message says",
	backend.PreflightTLS:      "--ca-cert ca.pem to trust the server's certificate authority, or --insecure",
	backend.PreflightNoAnswer: "check --url; --no-preflight skips this check",
	backend.PreflightNetwork:  "check --url; --no-preflight skips this check",
	backend.PreflightAuth:     "put the API key in $" + defaultAPIKeyEnv + " (or name its variable with --api-key-env), or pass --header 'Authorization: Bearer KEY'",
	backend.PreflightModel:    "--model NAME with a name the server serves; --no-preflight if it serves models it does not list",
}

// server parses the flags that say how to reach a server at url: --ca-cert,
// --insecure, --header and the API key in the environment. Its redactor
// also guards every error this command prints.
func (f *runFlags) server(env *Env, url string) (*backend.Target, error) {
	tlsConf, err := backend.LoadTLS(f.caCert, f.insecure)
	if err != nil {
		return nil, usagef("servebench run --ca-cert ca.pem", "--ca-cert: %v", err)
	}
	key := ""
	if f.apiKeyEnv != "" {
		key = env.Getenv(f.apiKeyEnv)
	}
	t, err := backend.NewTarget(backend.TargetOptions{URL: url, APIKey: key, Header: f.headers.h, TLS: tlsConf})
	if err != nil {
		return nil, usagef("servebench run --url http://127.0.0.1:8000", "--url: %v", err)
	}
	env.redactors = append(env.redactors, t.Redactor())
	return t, nil
}

// timeScale is how many times faster than model time the target runs (the
// built-in simulator, or a server announcing backend.TimeScaleHeader); 0
// for a real-time one, so run.json leaves it out.
func (t *target) timeScale() float64 {
	v, err := strconv.ParseFloat(t.info[backend.InfoTimeScale], 64)
	if err != nil || !(v > 0) || v == 1 {
		return 0
	}
	return v
}

// wallTime is a model-time limit (--timeout) in the wall time of a target
// running scale times faster.
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
func (f *runFlags) counters(ctx context.Context, t *target) (prompt, local tokenize.Counter, err error) {
	local, err = tokenize.NewTiktoken("cl100k_base")
	if err != nil {
		return nil, nil, err
	}
	switch spec := f.tokenizer; {
	case spec == "cl100k_base" || spec == "o200k_base":
		c, err := tokenize.NewTiktoken(spec)
		return c, c, err
	case strings.HasSuffix(spec, ".json"):
		h, err := tokenize.LoadHF(spec)
		if err != nil {
			return nil, nil, usagef("servebench run --tokenizer path/to/tokenizer.json", "--tokenizer: %v", err)
		}
		return h, h, nil
	case spec == "auto" || spec == "server":
		pctx, cancel := context.WithTimeout(ctx, tokenizerProbeTimeout)
		defer cancel()
		srv, err := tokenize.Detect(pctx, t.server, t.model)
		if srv != nil && err == nil {
			return srv, local, nil
		}
		if spec == "server" {
			if err == nil {
				err = errors.New("the server has no /tokenize endpoint")
			}
			return nil, nil, &Error{Err: fmt.Errorf("--tokenizer server: %w", err), Hint: "use --tokenizer auto to fall back to a local tokenizer", Code: ExitFailure}
		}
		return local, local, nil
	}
	return nil, nil, usagef("servebench run --tokenizer auto", "--tokenizer %q: want auto, server, cl100k_base, o200k_base or a tokenizer.json path", f.tokenizer)
}

// benchConfig builds the client and the workload for a run.
func (f *runFlags) benchConfig(ctx context.Context, env *Env, t *target, plan *loadPlan) (bench.Config, error) {
	promptCounter, local, err := f.counters(ctx, t)
	if err != nil {
		return bench.Config{}, err
	}
	scale := t.timeScale()
	client, err := backend.New(backend.Options{
		Target: t.server, API: f.api, Model: t.model,
		Timeout: wallTime(f.timeout, scale), FirstTokenTimeout: wallTime(f.firstTokenTimeout, scale),
		IgnoreEOS: f.ignoreEOS, Counter: localCounter{local},
	})
	if err != nil {
		return bench.Config{}, usagef("servebench run --url http://127.0.0.1:8000 --api openai-chat --model NAME", "%v", err)
	}
	chat := f.api == backend.OpenAIChat || f.api == backend.OllamaChat
	synth := tokenize.NewSynth(promptCounter, f.seed)
	newSource, err := f.newSource(synth, promptCounter, chat, scale)
	if err != nil {
		return bench.Config{}, err
	}
	cfg := bench.Config{
		Client:    client,
		NewSource: newSource,
		Run: record.Run{
			Schema: record.RunSchema, Version: version(), TimeScale: scale,
			Target:       record.Target{URL: t.server.Base(), API: f.api, Model: t.model, Simulated: t.simulated, Server: t.info},
			PromptTokens: plan.prompt.String(), OutputTokens: plan.output.String(),
			Seed: f.seed, IgnoreEOS: f.ignoreEOS, Tokenizer: promptCounter.Name(), Workload: f.workloadRecord(),
		},
		Points: plan.points,
		OutDir: f.out,
		Grace:  f.grace,
		Ahead:  aheadFor(plan.prompt.Mean()),
	}
	if t.simulated {
		cfg.Run.Target.URL = "builtin:sim"
	}
	if env.StderrIsTerminal {
		cfg.Progress = env.Stderr
	}
	return cfg, nil
}

// aheadTokens bounds the prompt text prepared before a point: about 64 MiB
// of text, enough for thousands of ordinary prompts or a few hundred
// long-context ones.
const aheadTokens = 16 << 20

// aheadFor sizes the prepared-request buffer. When a request count bounds
// the point, every prompt is prepared before the first send (within
// aheadTokens), so that sizing prompts with the server's /tokenize never
// adds requests to the server while it is being measured. Otherwise it is
// two rounds of virtual users, or two seconds of arrivals, at least 16.
func aheadFor(meanPromptTokens float64) func(p load.Point) int {
	return func(p load.Point) int {
		limit := max(16, int(aheadTokens/max(meanPromptTokens, 1)))
		if p.Requests > 0 && p.WarmupDuration == 0 {
			return min(p.Requests+p.WarmupRequests, limit)
		}
		n := 2 * p.Load.Concurrency
		if p.Load.Rate > 0 {
			n = int(2 * p.Load.Rate)
		}
		return min(max(n, 16), limit)
	}
}
