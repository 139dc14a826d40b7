package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/workload"
)

// target is the server a run measures: the user's, or an in-process
// simulator started for the run.
type target struct {
	// server is where it is and how to reach it: URL, headers, TLS and
	// the redactor of its credentials, parsed once from the flags.
	server    *backend.Target
	model     string
	picked    bool // model is the server's only one, none was given
	simulated bool
	info      map[record.ServerKey]string
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
		server, err := f.server(env, f.url, "")
		if err != nil {
			return nil, err
		}
		f.endpointAPI(env, server)
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
	// The simulator outlives a Ctrl-C: the requests in flight finish
	// within --grace, or are cancelled by the client at a second one; it
	// stops with the target (close), never with the run's context.
	url, err := srv.Start(context.WithoutCancel(ctx), "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the simulated server: %w", err)
	}
	// its loopback address is no name the user gave or knows
	server, err := f.server(env, url, "the built-in simulator")
	if err != nil {
		srv.Close()
		return nil, err
	}
	model := f.model
	if model == "" {
		model = cfg.Model.Name
	}
	info := map[record.ServerKey]string{
		record.ServerEngine: "servebench-sim", record.ServerDevice: cfg.Device.Name,
		record.ServerTimeScale:  strconv.FormatFloat(cfg.TimeScale, 'g', -1, 64),
		record.ServerMaxNumSeqs: strconv.Itoa(cfg.Engine.MaxNumSeqs),
	}
	if ch := cfg.Changes(sim.DefaultConfig()); len(ch) > 0 {
		info[record.ServerSimChanges] = strings.Join(ch, ", ")
	}
	if settings, err := json.Marshal(cfg.Settings()); err == nil {
		info[record.ServerSimSettings] = string(settings)
	}
	return &target{server: server, model: model, simulated: true, info: info,
		close: func() { server.CloseIdleConnections(); srv.Close() }}, nil
}

// endpointAPI takes the API from a --url that names its endpoint, unless
// --api was given, and says what is measured.
func (f *runFlags) endpointAPI(env *Env, server *backend.Target) {
	a := server.PathAPI()
	if a == "" {
		return
	}
	if !f.apiGiven {
		f.api = a
	}
	fmt.Fprintf(env.Stderr, "note: --url ends in the %s endpoint: measuring the server at %s with --api %s\n", a, server.Base(), f.api)
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
		hint := preflightHints[pe.Kind]
		if pe.Kind == backend.PreflightAuth {
			hint = f.authHint()
		}
		return &Error{Err: fmt.Errorf("preflight: %w", err), Hint: hint, Code: ExitFailure}
	case err != nil:
		return err
	}
	if p.Note != "" {
		fmt.Fprintf(env.Stderr, "note: %s\n", p.Note)
	}
	if p.Picked {
		t.model, t.picked = p.Model, true
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
	backend.PreflightNotFound: "give --url the server's root, e.g. http://127.0.0.1:8000, to which each --api adds its own path",
	backend.PreflightModel:    "--model NAME with a name the server serves; --no-preflight if it serves models it does not list",
}

// authHint says where the API key goes: the variable --api-key-env names.
func (f *runFlags) authHint() string {
	const header = "pass --header 'Authorization: Bearer KEY'"
	switch f.apiKeyEnv {
	case "":
		return "name the variable holding the API key with --api-key-env, or " + header
	case defaultAPIKeyEnv:
		return "put the API key in $" + defaultAPIKeyEnv + " (or name its variable with --api-key-env), or " + header
	}
	return "put the API key in $" + f.apiKeyEnv + " (named by --api-key-env), or " + header
}

// server parses the flags that say how to reach a server at url: --ca-cert,
// --insecure, --header and the API key in the environment. Its redactor
// also guards every error this command prints. name, when set, names the
// server in messages instead of url.
func (f *runFlags) server(env *Env, url, name string) (*backend.Target, error) {
	tlsConf, err := backend.LoadTLS(f.caCert, f.insecure)
	if err != nil {
		return nil, usagef("servebench run --ca-cert ca.pem", "--ca-cert: %v", err)
	}
	key := ""
	if f.apiKeyEnv != "" {
		key = env.Getenv(f.apiKeyEnv)
	}
	t, err := backend.NewTarget(backend.TargetOptions{URL: url, APIKey: key, Header: f.headers.h, TLS: tlsConf, Name: name})
	if err != nil {
		return nil, usagef("servebench run --url http://127.0.0.1:8000", "--url: %v", err)
	}
	// The telemetry URLs' user:password is as secret as the target's.
	env.redactors = append(env.redactors, t.Redactor(), f.tel.redactor())
	return t, nil
}

// benchConfig assembles the run from the flags and the started target
// (bench.NewConfig), with bench's errors told in flag terms.
func (f *runFlags) benchConfig(ctx context.Context, env *Env, t *target, plan *loadPlan) (bench.Config, error) {
	spec := f.workload
	spec.PromptTokens, spec.OutputTokens = plan.cells[0].PromptTokens, plan.cells[0].OutputTokens
	s := bench.Setup{
		Target: t.server, API: f.api, Model: t.model, ModelPicked: t.picked, Simulated: t.simulated, Server: t.info,
		Timeout: f.timeout, FirstTokenTimeout: f.firstTokenTimeout, IgnoreEOS: f.ignoreEOS,
		Tokenizer: f.tokenizer, Prompt: plan.prompt, Output: plan.output, Workload: spec, Matrix: plan.cells, Seed: f.seed,
		Points: plan.points, Slice: plan.slice, OutDir: f.out, Grace: f.grace, Version: version(),
		Labels: f.hist.labels, Args: f.runArgs(env),
	}
	// A terminal gets a live line; a log, one line every 10 s.
	s.Progress, s.ProgressLines = env.Stderr, !env.StderrIsTerminal
	f.shard.setup(env, &s)
	var err error
	if s.Telemetry, err = f.tel.options(); err != nil {
		return bench.Config{}, err
	}
	cfg, err := bench.NewConfig(ctx, s)
	if f.compress == bench.CompressGzip {
		cfg.Compress = bench.CompressGzip
	}
	if cfg.Telemetry != nil {
		f.tel.showNotes(env, cfg.Telemetry.Notes)
	}
	return cfg, benchError(err)
}

// setupHints map a bench.Setup field to the flag that sets it and an
// example.
var setupHints = map[string]struct{ flag, hint string }{
	"API":        {"--api", "servebench run --url http://127.0.0.1:8000 --api openai-chat --model NAME"},
	"ServerPID":  {"--server-pid", "servebench run --server-pid $(pgrep -f NAME) (the running server's process id)"},
	"Tokenizer":  {"--tokenizer", "servebench run --tokenizer auto (or cl100k_base, o200k_base, path/to/tokenizer.json)"},
	"StartEvery": {"--start-every", "servebench run --start-at TIME --start-every 2m (or bound every point with --duration)"},
}

// benchError tells bench's errors, which name no flag, in the terms of
// the flags that caused them.
func benchError(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[*bench.SetupError](err); ok {
		h := setupHints[se.Setting]
		return usagef(h.hint, "%s: %v", h.flag, se.Err)
	}
	if we, ok := errors.AsType[*workload.SpecError](err); ok {
		return usagef("servebench run -h (workloads: docs/WORKLOADS.md)", "%v", we)
	}
	switch {
	case errors.Is(err, bench.ErrNoServerTokenizer):
		return &Error{Err: fmt.Errorf("--tokenizer server: %w", err), Hint: "use --tokenizer auto to fall back to a local tokenizer", Code: ExitFailure}
	case errors.Is(err, bench.ErrRunExists):
		return &Error{Err: fmt.Errorf("--out %w", err), Hint: "choose another directory, so that nothing measured is overwritten", Code: ExitUsage}
	case errors.Is(err, bench.ErrRunDir):
		return &Error{Err: fmt.Errorf("--out %w", err), Code: ExitFailure}
	}
	return err
}
