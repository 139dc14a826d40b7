package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/sweep"
	"github.com/servebench/servebench/internal/workload"
)

// DefaultReadyTimeout bounds a server's start-up: vLLM loading a 70B model
// from a cold disk and compiling its CUDA graphs takes minutes, and a
// server not ready in ten is misconfigured more often than slow.
const DefaultReadyTimeout = 10 * time.Minute

// ServerLog is each configuration's server output, in its directory
// (credentials redacted).
const ServerLog = "server.log"

// logTailLines is how much of a failed server's log its result keeps.
const logTailLines = 20

// readyPoll is how often readiness is asked again: short against any
// server's start-up, long enough to cost it nothing.
const readyPoll = 100 * time.Millisecond

// Sweep is a server-configuration sweep: each configuration's server
// started from one command, measured, and stopped, one at a time.
type Sweep struct {
	// Serve is the command, split (launch.Split), with {port} and {NAME}
	// placeholders; Env are K=V added to the server's environment, with
	// placeholders too.
	Serve, Env []string
	Configs    []launch.Config
	// Out is the sweep's directory: each configuration gets
	// Out/Config.Name() (its run directory and server.log).
	Out string
	// Server says how to reach a server (credentials, headers, TLS; its
	// URL is set per configuration); API and Model what to ask it, for
	// readiness (empty: openai-chat, and the only model served).
	Server     backend.TargetOptions
	API, Model string
	// ReadyTimeout bounds each start-up (DefaultReadyTimeout when 0);
	// StopGrace the wait after SIGTERM (launch.DefaultStopGrace when 0).
	ReadyTimeout, StopGrace time.Duration
	// StartupOnly measures start-up alone, Repeat times per
	// configuration (at least once).
	StartupOnly bool
	Repeat      int
	// PlanConfig is the model file each configuration is planned from
	// (--plan-config), named in sweep.json; empty when none is.
	PlanConfig string
	// Measurement is a configuration's run on its ready server (its URL,
	// pid and directory in at); nil with StartupOnly.
	Measurement func(c launch.Config, at Launched) (Measurement, error)
	// Started, Ready, Measured: when set, see each server start, each
	// one ready, and each configuration end.
	Started  func(c launch.Config, args []string)
	Ready    func(c launch.Config, st sweep.Startup)
	Measured func(r *ConfigResult, got *Measured)
	// Redact hides credentials in server.log and in the results.
	Redact func(string) string
	// PickPort picks the server's port (nil: launch.FreePort).
	PickPort func() (int, error)
}

// Launched is a configuration's server, ready.
type Launched struct {
	URL string
	PID int
	Dir string
}

// ConfigResult is one configuration of a sweep: what sweep.json says of
// it, and its run.
type ConfigResult struct {
	sweep.Outcome
	// Measured is its run (nil when none ran).
	Measured *Measured
}

// RunSweep starts, measures and stops each configuration in turn. A
// configuration that fails is a result with its Error, and the sweep goes
// on; a cancelled ctx stops the current server and ends the sweep, with
// the configurations done so far.
func RunSweep(ctx context.Context, s Sweep) []*ConfigResult {
	var out []*ConfigResult
	for _, c := range s.Configs {
		if ctx.Err() != nil {
			break
		}
		r := s.runConfig(ctx, c)
		if s.Measured != nil {
			s.Measured(r, r.Measured)
		}
		out = append(out, r)
	}
	return out
}

// runConfig is one configuration: started, ready, measured and stopped,
// StartupOnly's repeats each a cold start of their own.
func (s Sweep) runConfig(ctx context.Context, c launch.Config) *ConfigResult {
	r := &ConfigResult{Outcome: sweep.Outcome{Config: c, Dir: ConfigDir(s.Out, c)}}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	for i := range max(s.Repeat, 1) {
		if !s.StartupOnly && i > 0 || ctx.Err() != nil {
			break
		}
		log := ServerLog
		if i > 0 {
			log = "server-" + strconv.Itoa(i+1) + ".log"
		}
		if err := s.once(ctx, c, r, filepath.Join(r.Dir, log)); err != nil {
			r.Error = s.redact(err.Error())
			if errors.Is(err, context.Canceled) {
				r.Error = "interrupted"
			}
			break
		}
	}
	if m := r.Measured; m != nil {
		r.Server = m.Server
		if m.Result != nil {
			r.Summary = m.Result.Summary
		}
		if m.Report != nil {
			r.Summary, r.Verdict = m.Report.Summary, m.Report.Verdict
		}
		if r.Error == "" && r.Summary != nil && r.Summary.AllFailed() {
			r.Error = "every measured request failed"
		}
	}
	return r
}

// once starts the configuration's server, waits until it is ready,
// measures it unless StartupOnly, and stops it.
func (s Sweep) once(ctx context.Context, c launch.Config, r *ConfigResult, logPath string) (err error) {
	pick := s.PickPort
	if pick == nil {
		pick = launch.FreePort
	}
	port, err := pick()
	if err != nil {
		return fmt.Errorf("no free port: %w", err)
	}
	if !launch.PortFree(port) {
		return fmt.Errorf("port %d is taken by another process", port)
	}
	vals := map[string]string{launch.PortName: strconv.Itoa(port)}
	for k, v := range c.Values {
		vals[k] = v
	}
	args, err := launch.ExpandAll(s.Serve, vals)
	if err != nil {
		return err
	}
	env, err := launch.ExpandAll(s.Env, vals)
	if err != nil {
		return err
	}
	r.Args, r.Env, r.Port = s.redactAll(args), s.redactAll(env), port
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	tail := launch.NewTail(16 << 10)
	lw := &launch.LineWriter{W: io.MultiWriter(f, tail), Filter: func(b []byte) []byte { return []byte(s.redact(string(b))) }}
	defer func() {
		lw.Close()
		f.Close()
		if err != nil {
			r.LogTail = tail.Lines(logTailLines)
		}
	}()
	if s.Started != nil {
		s.Started(c, r.Args)
	}
	p, err := launch.Start(launch.Spec{Args: args, Env: env, Log: lw, Grace: s.StopGrace})
	if err != nil {
		return fmt.Errorf("the command could not be started: %w", err)
	}
	r.PID = p.PID()
	defer func() {
		if serr := s.stop(ctx, p, port, r); serr != nil && err == nil {
			err = serr
		}
	}()
	url := "http://" + netAddr(port)
	st, err := s.ready(ctx, p, port, url)
	r.Startups = append(r.Startups, st)
	if err == nil && s.Ready != nil {
		s.Ready(c, st)
	}
	if err != nil || s.StartupOnly {
		return err
	}
	return s.measure(ctx, c, p, r, Launched{URL: url, PID: p.PID(), Dir: r.Dir})
}

// measure runs the configuration's load on its ready server.
func (s Sweep) measure(ctx context.Context, c launch.Config, p *launch.Process, r *ConfigResult, at Launched) error {
	m, err := s.Measurement(c, at)
	if err != nil {
		return err
	}
	// A server that dies ends its load at once: every request left would
	// fail to connect.
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.Exited():
			cancel()
		case <-mctx.Done():
		}
	}()
	got, err := Measure(mctx, m) // mctx carries ctx's abort channel
	r.Measured = got
	select {
	case <-p.Exited():
		return fmt.Errorf("the server %s during the load", p.ExitText())
	default:
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// stop stops the server's group and checks that its port is free; ctx
// ending (a second Ctrl-C) cuts the grace short.
func (s Sweep) stop(ctx context.Context, p *launch.Process, port int, r *ConfigResult) error {
	// The grace outlives a Ctrl-C, but not a second one (load.WithAbort):
	// the process exits soon after it, and must not leave the server.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if abort := load.Aborted(ctx); abort != nil {
		go func() {
			select {
			case <-abort:
				cancel()
			case <-sctx.Done():
			}
		}()
	}
	st, err := p.Stop(sctx, s.StopGrace)
	r.Stopped = &st
	if err != nil {
		return fmt.Errorf("stopping the server: %w", err)
	}
	deadline := time.Now().Add(cmp.Or(s.StopGrace, launch.DefaultStopGrace))
	for !launch.PortFree(port) {
		if time.Now().After(deadline) {
			return fmt.Errorf("port %d is still taken after the server stopped", port)
		}
		time.Sleep(readyPoll)
	}
	return nil
}

// ConfigDir is where a configuration's run and server log are written
// under the sweep's directory out: its own directory, named after it.
func ConfigDir(out string, c launch.Config) string { return filepath.Join(out, c.Name()) }

// ConfigLabels are the history labels of a configuration's run: the
// command line's (given), its parameters' values over them, the sweep's
// name (its directory's, out) and, when known (gpus > 0), its GPUs.
func ConfigLabels(given map[string]string, c launch.Config, out string, gpus float64) map[string]string {
	labels := maps.Clone(given)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, c.Values)
	labels["sweep"] = filepath.Base(out)
	if gpus > 0 {
		labels["gpus"] = strconv.FormatFloat(gpus, 'g', -1, 64)
	}
	return labels
}

// File is sweep.json of the sweep's results: its command and environment
// as given, quoted and redacted, the parameters they cross, each
// configuration's outcome, GPUs (gpus, as sweep.Summarize) and plan
// (plans, nil for none: no --plan-config), and the recommendation under o
// when the configurations were judged.
func (s Sweep) File(params []launch.Param, results []*ConfigResult, gpus func(launch.Config) float64,
	plans func(launch.Config) *sweep.PlanSpec, o *slo.Objective) *sweep.File {
	outs := make([]sweep.Outcome, len(results))
	for i, r := range results {
		outs[i] = r.Outcome
		if plans != nil {
			outs[i].Plan = plans(r.Config)
		}
	}
	spec := sweep.Spec{Serve: s.redact(strings.Join(launch.Quote(s.Serve), " ")), Env: s.redactAll(s.Env),
		Params: params, StartupOnly: s.StartupOnly, PlanConfig: s.PlanConfig}
	return sweep.Summarize(spec, outs, gpus, o)
}

func (s Sweep) redact(t string) string {
	if s.Redact == nil {
		return t
	}
	return s.Redact(t)
}

func (s Sweep) redactAll(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = s.redact(t)
	}
	return out
}

func netAddr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// apiOf is the API readiness asks in: the sweep's, else OpenAI chat.
func (s Sweep) apiOf() string { return cmp.Or(s.API, record.APIOpenAIChat) }

// PlanWorkload is the workload a configuration of a sweep run under p is
// planned for (sweep.PlanWorkload): base with p's lengths at p's largest
// load; base itself when p is nil (--startup-only: no load is run).
func (p *Plan) PlanWorkload(base plan.Workload) (plan.Workload, []string) {
	if p == nil {
		return sweep.PlanWorkload(base, workload.LengthDist{}, workload.LengthDist{}, nil)
	}
	return sweep.PlanWorkload(base, p.Prompt, p.Output, p.Points)
}
