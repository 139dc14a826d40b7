package bench

import (
	"context"
	"errors"
	"maps"
	"path/filepath"

	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/slo"
)

// Decider says how Decide measures a candidate, in its caller's terms.
type Decider struct {
	// Measurement is a candidate's measurement: its target (the
	// candidate's server) and its run. Decide sets the objective, and a
	// simulated candidate's simulator (CandidateSim).
	Measurement func(slo.Candidate) (Measurement, error)
	// Measured, when set, sees each candidate's outcome once it is made,
	// with what was measured (nil when its target did not start).
	Measured func(slo.Outcome, *Measured)
	// ErrorText is an error as an outcome keeps it (nil: its Error).
	ErrorText func(error) string
}

// CandidateError is a candidate whose server fails its check: Decide
// measures no candidate then.
type CandidateError struct {
	Name string
	Err  error
}

func (e *CandidateError) Error() string { return "candidate " + e.Name + ": " + e.Err.Error() }
func (e *CandidateError) Unwrap() error { return e.Err }

// Decide measures each candidate under the objective in turn (its
// Measurement, usually a capacity search) and ranks the outcomes
// (slo.Decide). Every server candidate is checked first (Launch.Open): a
// misconfigured one stops the decision before any load, as a
// *CandidateError, its only error. A candidate that cannot be measured is an outcome with
// its error; a cancelled ctx stops after the candidate being measured,
// and the decision covers those measured so far.
func Decide(ctx context.Context, o *slo.Objective, cands []slo.Candidate, d Decider) (*slo.Decision, error) {
	if err := d.check(ctx, cands); err != nil {
		return nil, err
	}
	var outs []slo.Outcome
	for _, c := range cands {
		x, got := d.measure(ctx, o, c)
		if d.Measured != nil {
			d.Measured(x, got)
		}
		outs = append(outs, x)
		if ctx.Err() != nil {
			break
		}
	}
	return slo.Decide(o, outs), nil
}

// check opens and checks every server candidate, before any is measured.
func (d Decider) check(ctx context.Context, cands []slo.Candidate) error {
	for _, c := range cands {
		if c.Simulated {
			continue
		}
		m, err := d.Measurement(c)
		if err != nil {
			return &CandidateError{Name: c.Name, Err: err}
		}
		t, err := m.Launch.Open(ctx)
		if err != nil {
			return &CandidateError{Name: c.Name, Err: err}
		}
		t.Close()
	}
	return nil
}

// measure measures one candidate under the objective.
func (d Decider) measure(ctx context.Context, o *slo.Objective, c slo.Candidate) (slo.Outcome, *Measured) {
	x := slo.Outcome{Candidate: c}
	m, err := d.Measurement(c)
	if err == nil && c.Simulated {
		// in memory: no temporary file to write and lose
		m.Launch.Spec.Sim, err = CandidateSim(c)
	}
	if err != nil {
		x.Error = d.text(err)
		return x, nil
	}
	m.Objective = o
	got, err := Measure(ctx, m)
	if got == nil {
		x.Error = d.text(err)
		return x, nil
	}
	x.Server = got.Server
	if rep := got.Report; rep != nil {
		x.Verdict = rep.Verdict
		x.Binding = rep.Verdict.Capacity.FailedSLOs
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		x.Error = d.text(err)
	}
	return x, got
}

func (d Decider) text(err error) string {
	if d.ErrorText == nil {
		return err.Error()
	}
	return d.ErrorText(err)
}

// CandidateSim is a simulated candidate's simulator, configured by its
// sim: settings (sim.ParseConfig).
func CandidateSim(c slo.Candidate) (*sim.Config, error) {
	cfg, err := sim.ParseConfig(c.Sim)
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}

// CandidateDir is where a candidate's run is written under the decision's
// directory out: its own directory, named after it ("" without out).
func CandidateDir(out string, c slo.Candidate) string {
	if out == "" {
		return ""
	}
	return filepath.Join(out, c.Name)
}

// CandidateLabels are the history labels of a candidate's run: the
// command line's (given), the candidate's own over them.
func CandidateLabels(given map[string]string, c slo.Candidate) map[string]string {
	labels := maps.Clone(given)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, c.Labels)
	return labels
}
