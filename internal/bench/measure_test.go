package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/slo"
)

// TestMeasure: a measurement opens the target, checks it (unless told
// not to), assembles the run on it, the run's target being the one
// opened, and runs its points or judges its objective; its hooks see each
// step in order, and a step's error stops the rest.
func TestMeasure(t *testing.T) {
	cfg := sim.DefaultConfig()
	simLaunch := Launch{Spec: TargetSpec{Sim: &cfg}}
	obj, err := slo.Resolve(slo.Objective{Name: "o"}, slo.Overrides{Concurrency: []int{1}, SLOs: []slo.SLO{mustSLO(t, "ttft p95 <= 60s")}})
	if err != nil {
		t.Fatal(err)
	}
	errSetup := errors.New("the caller's setup")
	for _, tc := range []struct {
		name       string
		l          Launch
		tokenizer  string
		setupErr   error
		objective  *slo.Objective
		wantEvents string
		wantErr    func(error) bool // nil: none
		wantRun    bool             // a target was started: got is set
	}{
		{"the simulator: opened, checked, assembled, run", simLaunch, "cl100k_base", nil, nil, "opened checked setup", nil, true},
		{"no preflight: not checked", Launch{Spec: TargetSpec{Sim: &cfg}, NoPreflight: true}, "cl100k_base", nil, nil, "opened setup", nil, true},
		{"an objective: judged", simLaunch, "cl100k_base", nil, obj, "opened checked setup", nil, true},
		{"a server that is not there: the preflight's error", Launch{Spec: TargetSpec{Server: backend.TargetOptions{URL: "http://127.0.0.1:1"}, Model: "m"}},
			"cl100k_base", nil, nil, "opened", func(err error) bool { _, ok := errors.AsType[*backend.PreflightError](err); return ok }, false},
		{"the caller's setup fails: its error, before any run", simLaunch, "cl100k_base", errSetup, nil, "opened checked setup",
			func(err error) bool { return errors.Is(err, errSetup) }, true},
		{"a setup that cannot be used: its error, once checked", simLaunch, "words", nil, nil, "opened checked setup",
			func(err error) bool {
				se, ok := errors.AsType[*SetupError](err)
				return ok && se.Setting == "Tokenizer"
			}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []string
			var opened *Target
			m := Measurement{Launch: tc.l, Objective: tc.objective, Eval: &slo.Evaluator{}}
			m.Launch.Opened = func(t *Target) { opened = t; events = append(events, "opened") }
			m.Launch.Checked = func(*backend.Preflight) { events = append(events, "checked") }
			m.Setup = func(t *Target) (Setup, error) {
				events = append(events, "setup")
				p := load.Point{Load: record.Load{Concurrency: 1}, Requests: 2}
				return Setup{Tokenizer: tc.tokenizer, Points: []load.Point{p}, Seed: 1}, tc.setupErr
			}
			got, err := Measure(t.Context(), m)
			if e := strings.Join(events, " "); e != tc.wantEvents {
				t.Errorf("hooks saw %q, want %q", e, tc.wantEvents)
			}
			if (got != nil) != tc.wantRun {
				t.Fatalf("got %+v, want a measurement: %v", got, tc.wantRun)
			}
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) || (got != nil && got.Result != nil) {
					t.Errorf("got %v and %+v, want the step's error and nothing run", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Server["engine"] != "servebench-sim" || got.Server["engine"] != opened.Info["engine"] {
				t.Errorf("the measurement's server is not the one opened: %v", got.Server)
			}
			run := got.Result.Summary.Run
			if run == nil || !run.Target.Simulated || run.Target.Model != opened.Model || run.Target.API != opened.API {
				t.Errorf("the run's target is not the one opened: %+v", run)
			}
			if (got.Report != nil) != (tc.objective != nil) {
				t.Errorf("report %+v with objective %v", got.Report, tc.objective)
			}
			// Judged, the point is raised to its steady-state size.
			if v := got.Report; v != nil && (v.Verdict == nil || len(v.Verdict.Points) != 1 || v.Verdict.Points[0].Requests != SteadyRequestsPerUser) {
				t.Errorf("the objective is not judged on a steady point: %+v", v.Verdict)
			}
			if _, n := m.Eval.Kept(record.Load{Concurrency: 1}); n == 0 {
				t.Errorf("the evaluator saw no record")
			}
		})
	}
}

func mustSLO(t *testing.T, expr string) slo.SLO {
	s, err := slo.Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
