package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
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
--tokenizer, --seed, --out DIR gives each candidate DIR/NAME). The decision
prints as a table, --format markdown (for a pull request) or --json.

Examples:
  servebench decide --candidates candidates.yaml --model meta-llama/Llama-3.1-8B-Instruct
  servebench decide --objective api --target name=a,url=http://10.0.0.1:8000,gpus=1,cost=2 \
      --target name=b,url=http://10.0.0.2:8000,gpus=2,cost=3
  servebench decide --candidates candidates.yaml --out runs/decide --json > decision.json

Exit codes: 0 a candidate meets the objective, 1 failure, 2 usage error,
3 no candidate meets it, 4 none meets it on valid evidence and one was
INCONCLUSIVE (its simulator behind, its client saturated, ...), 130 interrupted.
`

func decideCmd(ctx context.Context, env *Env, args []string) (err error) {
	defer func() { err = hintAs(err, "decide", "--candidates FILE") }()
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
	if err := parseFlags(fs, liveArgs(args)); err != nil {
		return err
	}
	f.hist.args = append([]string{"decide"}, args...)
	f.apiGiven = flagSet(fs, "api")
	if fs.NArg() > 0 || f.url != "" || f.simConfig != "" {
		return usagef("servebench decide -h", "decide measures the candidates of --candidates FILE and --target; it takes no --url, --sim-config or argument")
	}
	if !slices.Contains(tableFormats, f.format) {
		return usagef("servebench decide --candidates FILE --format markdown  or  --json", "--format %s: decide prints its decision as %s", f.format, strings.Join(tableFormats, ", "))
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
		if err := benchError(rundir.Check(bench.CandidateDir(f.out, c))); err != nil {
			return err
		}
	}
	if err := f.live.start(env); err != nil {
		return err
	}
	defer f.live.close(ctx, env, "")
	d, err := bench.Decide(ctx, o, cands, f.decider(ctx, env, o, plan))
	if ce, ok := errors.AsType[*bench.CandidateError](err); ok {
		return f.candidateError(ce)
	}
	return f.finishDecision(ctx, env, d)
}

// candidates gathers the file's candidates and the --target ones
// (slo.GatherCandidates), and takes the file's objective unless
// --objective was given.
func candidates(file string, targets []slo.Candidate, f *runFlags) ([]slo.Candidate, error) {
	const hint = "servebench decide -h"
	checkSim := func(c slo.Candidate) error {
		if !c.Simulated {
			return nil
		}
		if _, err := bench.CandidateSim(c); err != nil {
			return usagef("servebench sim --print-config shows every setting", "--candidates %s: candidate %s: sim: %v", file, c.Name, err)
		}
		return nil
	}
	cf, err := slo.GatherCandidates(file, targets, checkSim)
	switch {
	case errors.Is(err, slo.ErrNoCandidates):
		return nil, usagef(hint, "no candidates: give --candidates FILE or --target name=N,url=U")
	case errors.As(err, new(*Error)): // checkSim's
		return nil, err
	case errors.As(err, new(*slo.DuplicateError)):
		return nil, usagef(hint, "%v", err)
	case errors.As(err, new(*fs.PathError)):
		return nil, usagef(hint, "--candidates: %v", err)
	case err != nil:
		return nil, usagef(hint, "--candidates %s: %v", file, err)
	}
	if f.slo.objective == "" {
		f.slo.objective = cf.Objective
	}
	if f.slo.objective == "" && len(f.slo.slos) == 0 {
		return nil, usagef(hint, "no objective: give --objective NAME|FILE, --slo, or 'objective:' in the candidates file")
	}
	return cf.Candidates, nil
}

// decider measures each candidate as run measures a server (forCandidate),
// stores each in the history and says its outcome on stderr.
func (f *runFlags) decider(ctx context.Context, env *Env, o *slo.Objective, plan *bench.Plan) bench.Decider {
	measurement := func(c slo.Candidate) (bench.Measurement, error) {
		return f.forCandidate(c).measurement(env, plan)
	}
	measured := func(x slo.Outcome, got *bench.Measured) {
		if got != nil && got.Result != nil && got.Report != nil {
			f.forCandidate(x.Candidate).remember(ctx, env, got.Report.Summary, o, got.Report.Verdict)
		}
		fmt.Fprintf(env.Stderr, "candidate %s: %s\n", x.Candidate.Name, report.OutcomeLine(x))
	}
	text := func(err error) string { return env.redact(errorText(f.measureError(err))) }
	return bench.Decider{Measurement: measurement, Measured: measured, ErrorText: text}
}

// forCandidate is the flags with c's server in place of --url, --model
// and --api, its run in its own directory under --out, and its labels
// beside the command line's, winning.
func (f *runFlags) forCandidate(c slo.Candidate) *runFlags {
	cf := *f
	cf.url, cf.model, cf.api = c.URL, cmp.Or(c.Model, f.model), cmp.Or(c.API, f.api)
	cf.apiGiven = f.apiGiven || c.API != ""
	cf.out = bench.CandidateDir(f.out, c)
	cf.hist.labels = bench.CandidateLabels(f.hist.labels, c)
	return &cf
}

// candidateError is a candidate's failed check as decide tells it.
func (f *runFlags) candidateError(ce *bench.CandidateError) error {
	var e *Error
	if errors.As(f.measureError(ce.Err), &e) {
		return &Error{Err: fmt.Errorf("candidate %s: %w", ce.Name, e.Err), Hint: e.Hint, Code: e.Code}
	}
	return fmt.Errorf("candidate %s: %w", ce.Name, ce.Err)
}

func errorText(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Hint != "" {
		return e.Err.Error() + " (try: " + e.Hint + ")"
	}
	return err.Error()
}

func (f *runFlags) finishDecision(ctx context.Context, env *Env, d *slo.Decision) error {
	render := report.Decision
	switch {
	case f.jsonOut || f.format == "json":
		render = report.DecisionJSON
	case f.format == "markdown":
		render = report.DecisionMarkdown
	}
	switch err := render(env.Stdout, d); {
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
