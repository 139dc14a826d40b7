package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
)

// TargetSpec is the server a run measures, as plain values.
type TargetSpec struct {
	// Server says how to reach the user's server; an empty URL starts the
	// built-in simulator on loopback instead (its Name is then set).
	Server backend.TargetOptions
	// API is the wire API; empty: the one the URL's endpoint path names,
	// else record.APIOpenAIChat.
	API string
	// Model is sent with each request; empty: the simulator's, or the
	// server's only model once Preflight has asked it.
	Model string
	// Sim configures the built-in simulator (nil: sim.DefaultConfig).
	Sim *sim.Config
}

// SimName is how messages name the built-in simulator: its loopback
// address is no name the user gave or knows.
const SimName = "the built-in simulator"

// Target is a server ready to be measured: the user's, or a simulator
// started for the run. Close releases it.
type Target struct {
	Server      *backend.Target
	API         string
	Model       string
	ModelPicked bool // Model is the server's only one, none was given
	Simulated   bool
	// Info is what the server says about itself (Describe), and the
	// simulator's settings.
	Info  map[record.ServerKey]string
	close func()
	// clockLost reads the built-in simulator's skipped time; nil for a
	// real server
	clockLost func() time.Duration
}

// OpenTarget parses the user's server, or starts the built-in simulator
// when no URL is given. A URL that cannot be used is a SetupError of
// "URL"; the caller closes the target.
func OpenTarget(ctx context.Context, spec TargetSpec) (*Target, error) {
	if spec.Server.URL != "" {
		server, err := backend.NewTarget(spec.Server)
		if err != nil {
			return nil, &SetupError{Setting: "URL", Err: err}
		}
		api := cmp.Or(spec.API, server.PathAPI(), record.APIOpenAIChat)
		return &Target{Server: server, API: api, Model: spec.Model, close: server.CloseIdleConnections}, nil
	}
	return startSim(ctx, spec)
}

// startSim starts the built-in simulator on a loopback port and returns
// it as the target, its configuration in Info.
func startSim(ctx context.Context, spec TargetSpec) (*Target, error) {
	cfg := sim.DefaultConfig()
	if spec.Sim != nil {
		cfg = *spec.Sim
	}
	srv, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated server: %w", err)
	}
	// The simulator outlives a Ctrl-C: the requests in flight finish
	// within the grace, or are cancelled by the client at a second one; it
	// stops with the target (Close), never with the run's context.
	url, err := srv.Start(context.WithoutCancel(ctx), "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the simulated server: %w", err)
	}
	opts := spec.Server
	opts.URL, opts.Name = url, SimName
	server, err := backend.NewTarget(opts)
	if err != nil {
		srv.Close()
		return nil, &SetupError{Setting: "URL", Err: err}
	}
	return &Target{Server: server, API: cmp.Or(spec.API, record.APIOpenAIChat), Model: cmp.Or(spec.Model, cfg.Model.Name),
		Simulated: true, Info: simInfo(cfg), clockLost: srv.ClockLost,
		close: func() { server.CloseIdleConnections(); srv.Close() }}, nil
}

// simInfo is the simulator's self-description in run.json's
// target.server: what it simulates, its clock and how it was configured.
func simInfo(cfg sim.Config) map[record.ServerKey]string {
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
	return info
}

// Close stops the simulator the target started, and closes the idle
// connections.
func (t *Target) Close() { t.close() }

// Preflight checks that the server answers with the right scheme, accepts
// the credentials and serves the model, before any load: a
// misconfiguration is an error (*backend.PreflightError), not a benchmark
// of failures. A server serving one model, when none was given, picks it.
func (t *Target) Preflight(ctx context.Context) (*backend.Preflight, error) {
	p, err := t.Server.Preflight(ctx, t.API, t.Model)
	if err != nil {
		return nil, err
	}
	if p.Picked {
		t.Model, t.ModelPicked = p.Model, true
	}
	return p, nil
}

// Describe asks the server what it is (backend.Describe) and keeps the
// answers in Info, below what Info says already.
func (t *Target) Describe(ctx context.Context) {
	if t.Info == nil {
		t.Info = map[record.ServerKey]string{}
	}
	for k, v := range backend.Describe(ctx, t.Server, t.Model) {
		if _, ok := t.Info[k]; !ok {
			t.Info[k] = v
		}
	}
}

// Config assembles the run of s on t (NewConfig), s's target fields
// (Target, API, Model, ModelPicked, Simulated, Server) being t's.
func (t *Target) Config(ctx context.Context, s Setup) (Config, error) {
	s.Target, s.API, s.Model, s.ModelPicked, s.Simulated, s.Server = t.Server, t.API, t.Model, t.ModelPicked, t.Simulated, t.Info
	s.SimClockLost = t.clockLost
	return NewConfig(ctx, s)
}

// Launch is how a run's target is started (Measure, the one sequence the
// servebench package and command share, opens it). The hooks let a caller
// say, in its own words, what happened on the way.
type Launch struct {
	Spec TargetSpec
	// NoPreflight skips the check before any load (Target.Preflight).
	NoPreflight bool
	// Opened, when set, sees the target once open, before any request.
	Opened func(*Target)
	// Checked, when set, sees what the preflight found: a note, a model
	// picked.
	Checked func(*backend.Preflight)
}

// Open opens l's target (OpenTarget) and checks it unless NoPreflight,
// returning the preflight's error as it is; the target is closed on an
// error, else the caller closes it.
func (l Launch) Open(ctx context.Context) (*Target, error) {
	t, err := OpenTarget(ctx, l.Spec)
	if err != nil {
		return nil, err
	}
	if l.Opened != nil {
		l.Opened(t)
	}
	if l.NoPreflight {
		return t, nil
	}
	p, err := t.Preflight(ctx)
	if err != nil {
		t.Close()
		return nil, err
	}
	if l.Checked != nil {
		l.Checked(p)
	}
	return t, nil
}
