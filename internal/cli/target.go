package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/workload"
)

// measurement is the run the flags ask for (bench.Measure, as the
// servebench package measures): their target, started with a preflight
// unless --no-preflight, and their run, assembled once it is (setup).
func (f *runFlags) measurement(env *Env, plan *bench.Plan) (bench.Measurement, error) {
	l, err := f.launch(env)
	if err != nil {
		return bench.Measurement{}, err
	}
	return bench.Measurement{Launch: l, Setup: func(*bench.Target) (bench.Setup, error) { return f.setup(env, plan) },
		Judge:     bench.JudgeOptions{Repeat: f.slo.repeat, FindCapacity: f.slo.findCapacity, Workloads: bench.CellLabels(plan.Cells)},
		Unsampled: func(notes []string) { f.tel.showNotes(env, notes) }, Watch: f.live.watch()}, nil
}

// measureError tells bench.Measure's errors in the terms of the flags: a
// preflight's with what to do about its kind, the others as benchError
// does.
func (f *runFlags) measureError(err error) error {
	if pe, ok := errors.AsType[*backend.PreflightError](err); ok {
		hint := pe.Hint()
		if pe.Kind == backend.PreflightAuth {
			hint = f.authHint()
		}
		return &Error{Err: fmt.Errorf("preflight: %w", err), Hint: hint, Code: ExitFailure}
	}
	return benchError(err)
}

// launch is how the flags start the target: what to open, and what to
// say on the way. The telemetry URLs' user:password is as secret as the
// target's: both redactors guard every error printed from then on.
func (f *runFlags) launch(env *Env) (bench.Launch, error) {
	if err := backend.CheckAPI(f.api, "x"); err != nil {
		return bench.Launch{}, usagef("servebench run --api openai-chat", "--api: %v", err)
	}
	spec := bench.TargetSpec{Model: f.model}
	if f.apiGiven {
		spec.API = f.api
	}
	if f.url != "" && f.simConfig != "" {
		return bench.Launch{}, usagef("servebench run --sim-config sim.yaml (without --url)", "--sim-config configures the built-in simulator; it cannot be used with --url")
	}
	if f.url == "" && f.simConfig != "" {
		const hint = "servebench sim --print-config > sim.yaml"
		cfg, err := sim.LoadConfig(f.simConfig)
		switch {
		case errors.As(err, new(*fs.PathError)):
			return bench.Launch{}, usagef(hint, "--sim-config: %v", err)
		case err != nil:
			return bench.Launch{}, usagef(hint, "--sim-config %s: %v", f.simConfig, err)
		}
		spec.Sim = &cfg
	}
	var err error
	if spec.Server, err = f.server(env, f.url); err != nil {
		return bench.Launch{}, err
	}
	opened := func(t *bench.Target) {
		env.redactors = append(env.redactors, t.Server.Redactor(), f.tel.redactor())
		f.api = t.API
		if a := t.Server.PathAPI(); a != "" {
			fmt.Fprintf(env.Stderr, "note: --url ends in the %s endpoint: measuring the server at %s with --api %s\n", a, t.Server.Base(), f.api)
		}
	}
	checked := func(p *backend.Preflight) {
		if p.Note != "" {
			fmt.Fprintf(env.Stderr, "note: %s\n", p.Note)
		}
		if p.Picked {
			fmt.Fprintf(env.Stderr, "model: %s (no --model given; the only model the server serves)\n", p.Model)
		}
	}
	return bench.Launch{Spec: spec, NoPreflight: f.noPreflight, Opened: opened, Checked: checked}, nil
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

// server parses the flags that say how to reach a server at url:
// --ca-cert, --insecure, --header and the API key in the environment. The
// target's redactor, from them, also guards every error this command
// prints.
func (f *runFlags) server(env *Env, url string) (backend.TargetOptions, error) {
	tlsConf, err := backend.LoadTLS(f.caCert, f.insecure)
	if err != nil {
		return backend.TargetOptions{}, usagef("servebench run --ca-cert ca.pem", "--ca-cert: %v", err)
	}
	key := ""
	if f.apiKeyEnv != "" {
		key = env.Getenv(f.apiKeyEnv)
	}
	return backend.TargetOptions{URL: url, APIKey: key, Header: f.headers.h, TLS: tlsConf}, nil
}

// setup is the run the flags ask for, but for its target (bench.Target
// sets it): the credentials it knows of are redacted from the command
// line run.json records, as the target is open by then.
func (f *runFlags) setup(env *Env, plan *bench.Plan) (bench.Setup, error) {
	var s bench.Setup
	s.Timeout, s.FirstTokenTimeout, s.IgnoreEOS = f.timeout, f.firstTokenTimeout, f.ignoreEOS
	s.Tokenizer, s.Seed, s.OutDir, s.Grace, s.Version = f.tokenizer, f.seed, f.out, f.grace, bench.RecordedVersion()
	plan.Apply(&s)
	s.Labels, s.Args = f.hist.labels, f.runArgs(env)
	// A terminal gets a live line; a log, one line every 10 s.
	s.Progress, s.ProgressLines = env.Stderr, !env.StderrIsTerminal
	f.shard.setup(env, &s)
	if f.compress == bench.CompressGzip {
		s.Compress = bench.CompressGzip
	}
	var err error
	s.Telemetry, err = f.tel.options()
	return s, err
}

// benchError tells bench's errors, which name no flag, in the terms of
// the flags that caused them.
func benchError(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[*bench.SetupError](err); ok {
		return usagef(se.Hint(), "%s: %v", se.Flag(), se.Err)
	}
	if we, ok := errors.AsType[*workload.SpecError](err); ok {
		return usagef("servebench run -h (workloads: docs/WORKLOADS.md)", "%v", we)
	}
	switch {
	case errors.Is(err, bench.ErrNoServerTokenizer):
		return &Error{Err: fmt.Errorf("--tokenizer server: %w", err), Hint: "use --tokenizer auto to fall back to a local tokenizer", Code: ExitFailure}
	case errors.Is(err, rundir.ErrRunExists):
		return &Error{Err: fmt.Errorf("--out %w", err), Hint: "choose another directory, so that nothing measured is overwritten", Code: ExitUsage}
	case errors.Is(err, rundir.ErrRunDir):
		return &Error{Err: fmt.Errorf("--out %w", err), Code: ExitFailure}
	}
	return err
}
