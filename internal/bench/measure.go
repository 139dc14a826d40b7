package bench

import (
	"context"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// Measurement is one run as servebench run and decide, and the servebench
// package's Run and Judge, ask for it: the target to start, the run to
// assemble on it, and, to judge, an objective. Measure is the one
// sequence they share.
type Measurement struct {
	Launch Launch
	// Setup assembles the run once the target is open, checked and
	// described, before the run is assembled on it (Target.Config sets
	// its target fields): a caller may say what it learned from the
	// target first, or redact with its credentials. An error stops the
	// measurement before any load.
	Setup func(*Target) (Setup, error)
	// Objective, when set, is judged (Judge, with Judge's options; their
	// Base and Eval are set here) in place of the points run in order
	// (Run).
	Objective *slo.Objective
	Judge     JudgeOptions
	// Eval, when set, receives every record: the caller keeps the records
	// by load once Measure returns.
	Eval *slo.Evaluator
	// Unsampled, when set, sees what telemetry cannot sample, once the run
	// is assembled and before any request.
	Unsampled func(notes []string)
	// Watch, when set, sees the run as it goes (Config.Watch).
	Watch Watcher
}

// Measured is what Measure did on a target it started.
type Measured struct {
	// Result is the run (nil when it did not open: no point ran).
	Result *Result
	// Report is the objective's verdict, with an Objective.
	Report *slo.Report
	// Server is what the target said about itself (Target.Info).
	Server map[record.ServerKey]string
}

// Measure starts the target (Launch.Open), asks it what it is, assembles
// the run on it and runs the points, or judges the objective; the target
// is closed after. It returns nil when the target could not be started,
// with the error as it is (a preflight's *backend.PreflightError). On an
// error after the run started, the result covers what completed; when
// ctx is cancelled, Result.Interrupted says so.
func Measure(ctx context.Context, m Measurement) (*Measured, error) {
	t, err := m.Launch.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	t.Describe(ctx)
	got := &Measured{Server: t.Info}
	s, err := m.Setup(t)
	if err != nil {
		return got, err
	}
	cfg, err := t.Config(ctx, s)
	if err != nil {
		return got, err
	}
	cfg.Watch = m.Watch
	if m.Unsampled != nil && cfg.Telemetry != nil {
		m.Unsampled(cfg.Telemetry.Notes)
	}
	if m.Objective == nil {
		if m.Eval != nil {
			cfg.Observe = m.Eval.Add
		}
		got.Result, err = Run(ctx, cfg)
		return got, err
	}
	opt := m.Judge
	opt.Base, opt.Eval = cfg.Points[0], m.Eval
	got.Report, got.Result, err = Judge(ctx, cfg, m.Objective, opt)
	return got, err
}
