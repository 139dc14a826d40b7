package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/slo"
)

const decideUsage = `
Usage: servebench decide [flags] (--candidates FILE | --target name=N,url=U,LABEL=V ...)

Runs one serving objective against several labelled servers, searches each
one's capacity under it, and recommends the least complex candidate — the
fewest GPUs, then the lowest cost — that meets the objective at its target
load. It records what each server says about itself (/v1/models, /version,
/info, /props, /api/version, /api/show) and flags differences that the
candidates' labels do not declare: model revision, quantization, runtime
version, context length, sampling settings.

A candidates file:

  objective: chat              # a preset or an objective file (or --objective)
  candidates:
    - name: a100-vllm
      url: http://10.0.0.1:8000
      labels: {gpus: 1, gpu: A100-80GB, runtime: vllm-0.6.3, quantization: bf16, cost: 2.1}
    - name: sim-16             # an in-process simulator instead of a url
      sim: {engine: {max_num_seqs: 16}}
      labels: {gpus: 2, cost: 4}

run's flags set the workload, the load and the client (--model, --requests,
--tokenizer, --seed, --out DIR gives each candidate DIR/NAME).

Examples:
  servebench decide --candidates candidates.yaml --model meta-llama/Llama-3.1-8B-Instruct
  servebench decide --objective api --target name=a,url=http://10.0.0.1:8000,gpus=1,cost=2 \
      --target name=b,url=http://10.0.0.2:8000,gpus=2,cost=3
  servebench decide --candidates candidates.yaml --out runs/decide --json > decision.json

Exit codes: 0 a candidate meets the objective, 1 failure, 2 usage error,
3 no candidate meets it, 4 none meets it on valid evidence and one was
INCONCLUSIVE (its simulator behind, its client saturated, ...), 130 interrupted.
`

func decideCmd(ctx context.Context, env *Env, args []string) error {
	var f runFlags
	fs := newFlagSet(env, "decide", decideUsage)
	f.define(fs)
	file := fs.String("candidates", "", "YAML file of candidates (and optionally the objective)")
	var targets []slo.Candidate
	fs.Func("target", "a candidate: name=N,url=U[,api=A][,model=M][,LABEL=VALUE...] (repeatable)", func(v string) error {
		c, err := slo.ParseTarget(v)
		targets = append(targets, c)
		return err
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f.hist.args = append([]string{"decide"}, args...)
	f.apiGiven = flagSet(fs, "api")
	if fs.NArg() > 0 || f.url != "" || f.simConfig != "" {
		return usagef("servebench decide -h", "decide measures the candidates of --candidates FILE and --target; it takes no --url, --sim-config or argument")
	}
	restore, err := limitCPUs(f.cpus)
	if err != nil {
		return err
	}
	defer restore()
	cands, err := candidates(*file, targets, &f)
	if err != nil {
		return err
	}
	f.slo.findCapacity = true
	o, err := f.objective(fs)
	if err != nil {
		return err
	}
	plan, err := f.plan(o)
	if err != nil {
		return err
	}
	for _, c := range cands {
		if err := benchError(rundir.Check(candidateDir(f.out, c))); err != nil {
			return err
		}
	}
	if err := f.preflightCandidates(ctx, env, cands); err != nil {
		return err
	}
	var outs []slo.Outcome
	for _, c := range cands {
		x := f.measureCandidate(ctx, env, o, plan, c)
		outs = append(outs, x)
		fmt.Fprintf(env.Stderr, "candidate %s: %s\n", c.Name, outcomeLine(x))
		if ctx.Err() != nil {
			break
		}
	}
	return f.finishDecision(ctx, env, slo.Decide(o, outs))
}

// candidates gathers the file's candidates and the --target ones, and
// takes the file's objective unless --objective was given.
func candidates(file string, targets []slo.Candidate, f *runFlags) ([]slo.Candidate, error) {
	const hint = "servebench decide -h"
	var out []slo.Candidate
	if file != "" {
		cf, err := slo.ReadCandidates(file)
		switch {
		case errors.As(err, new(*fs.PathError)):
			return nil, usagef(hint, "--candidates: %v", err)
		case err != nil:
			return nil, usagef(hint, "--candidates %s: %v", file, err)
		}
		out = cf.Candidates
		if f.slo.objective == "" {
			f.slo.objective = cf.Objective
		}
	}
	seen := map[string]bool{}
	for _, c := range append(out, targets...) {
		if seen[c.Name] {
			return nil, usagef(hint, "candidate name %q is used twice", c.Name)
		}
		seen[c.Name] = true
		if c.Simulated {
			if _, err := sim.ParseConfig(c.Sim); err != nil {
				return nil, usagef("servebench sim --print-config shows every setting", "--candidates %s: candidate %s: sim: %v", file, c.Name, err)
			}
		}
	}
	out = append(out, targets...)
	if len(out) == 0 {
		return nil, usagef(hint, "no candidates: give --candidates FILE or --target name=N,url=U")
	}
	if f.slo.objective == "" && len(f.slo.slos) == 0 {
		return nil, usagef(hint, "no objective: give --objective NAME|FILE, --slo, or 'objective:' in the candidates file")
	}
	return out, nil
}

// candidateDir is where a candidate's run is written under --out ("" for
// none).
func candidateDir(out string, c slo.Candidate) string {
	if out == "" {
		return ""
	}
	return filepath.Join(out, c.Name)
}

// preflightCandidates checks every server candidate before any is
// measured: a misconfigured one stops the decision before any load.
func (f *runFlags) preflightCandidates(ctx context.Context, env *Env, cands []slo.Candidate) error {
	for _, c := range cands {
		if c.Simulated {
			continue
		}
		cf := f.forCandidate(c)
		t, err := startTarget(ctx, env, &cf)
		var e *Error
		switch {
		case errors.As(err, &e):
			return &Error{Err: fmt.Errorf("candidate %s: %w", c.Name, e.Err), Hint: e.Hint, Code: e.Code}
		case err != nil:
			return fmt.Errorf("candidate %s: %w", c.Name, err)
		}
		t.Close()
	}
	return nil
}

// forCandidate is the flags with c's server in place of --url, --model
// and --api.
func (f *runFlags) forCandidate(c slo.Candidate) runFlags {
	cf := *f
	cf.url, cf.model, cf.api = c.URL, cmp.Or(c.Model, f.model), cmp.Or(c.API, f.api)
	cf.apiGiven = f.apiGiven || c.API != ""
	return cf
}

// measureCandidate searches one candidate's capacity under the objective.
func (f *runFlags) measureCandidate(ctx context.Context, env *Env, o *slo.Objective, plan *bench.Plan, c slo.Candidate) slo.Outcome {
	x := slo.Outcome{Candidate: c}
	cf := f.forCandidate(c)
	cf.out = candidateDir(f.out, c)
	cf.hist.labels = maps.Clone(f.hist.labels) // the candidate's labels beside the command line's, winning
	if cf.hist.labels == nil {
		cf.hist.labels = labelFlag{}
	}
	maps.Copy(cf.hist.labels, c.Labels)
	if c.Simulated {
		cfg, err := sim.ParseConfig(c.Sim) // checked by candidates
		if err != nil {
			x.Error = err.Error()
			return x
		}
		cf.sim = &cfg // in memory: no temporary file to write and lose
	}
	t, err := startTarget(ctx, env, &cf)
	if err != nil {
		x.Error = env.redact(errorText(err))
		return x
	}
	defer t.Close()
	t.Describe(ctx)
	x.Server = t.Info
	rep, _, err := cf.judge(ctx, env, o, t, plan)
	if rep != nil {
		x.Verdict = rep.Verdict
		x.Binding = rep.Verdict.Capacity.FailedSLOs
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		x.Error = env.redact(errorText(err))
	}
	return x
}

func errorText(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Hint != "" {
		return e.Err.Error() + " (try: " + e.Hint + ")"
	}
	return err.Error()
}

func outcomeLine(x slo.Outcome) string {
	if x.Error != "" {
		return "error: " + x.Error
	}
	if x.Verdict == nil {
		return "not measured"
	}
	return x.Verdict.Text
}

func (f *runFlags) finishDecision(ctx context.Context, env *Env, d *slo.Decision) error {
	var err error
	if f.jsonOut || f.format == "json" {
		err = report.DecisionJSON(env.Stdout, d)
	} else {
		err = report.Decision(env.Stdout, d)
	}
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return &Error{Err: errors.New("interrupted: the table covers the candidates measured so far"), Code: ExitInterrupted}
	case d.Recommended == "" && len(d.Inconclusive) > 0:
		// none met it on valid evidence, and one might have
		return &Error{Err: fmt.Errorf("objective %s: %s", d.Objective.Name, d.Why), Hint: hintInconclusive, Code: ExitInconclusive}
	case d.Recommended == "":
		return &Error{Err: fmt.Errorf("objective %s: %s", d.Objective.Name, d.Why), Code: ExitObjective}
	}
	return nil
}
