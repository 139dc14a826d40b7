package cli

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/slo"
)

const objectiveUsage = `
Usage: servebench objective list
       servebench objective show NAME

Serving objectives say what a server must achieve: the workload, the load,
and SLOs such as 'ttft p95 <= 1s' or 'speed p95 >= 10 tok/s' (95% of
requests decode at 10 tok/s or faster). 'list' shows the presets; 'show'
prints one as YAML to copy and edit. Use one with
'servebench run --objective NAME|FILE' or 'servebench decide'.

Examples:
  servebench objective list
  servebench objective show chat > my-objective.yaml
  servebench run --objective my-objective.yaml --url http://127.0.0.1:8000 --model M
  servebench run --objective chat --slo 'ttft p95 <= 500ms' --find-capacity
`

func objectiveCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "objective", objectiveUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "list":
		return listObjectives(env)
	case fs.NArg() == 2 && fs.Arg(0) == "show":
		b, err := slo.PresetYAML(fs.Arg(1))
		if err != nil {
			return usagef("servebench objective list", "%v", err)
		}
		_, err = env.Stdout.Write(b)
		return err
	}
	return usagef("servebench objective list  or  servebench objective show chat", "want 'list' or 'show NAME'")
}

func listObjectives(env *Env) error {
	presets, err := slo.Presets()
	if err != nil {
		return err
	}
	return report.Objectives(env.Stdout, presets)
}

// loadObjective reads --objective (slo.Open): a file when one exists at
// that path, else a preset.
func loadObjective(spec string) (*slo.Objective, error) {
	const hint = "servebench objective show chat > objective.yaml   (presets: servebench objective list)"
	o, err := slo.Open(spec)
	switch {
	case errors.Is(err, slo.ErrNoObjective):
		return nil, usagef(hint, "--objective %q: no such file or preset (presets: %s)", spec, strings.Join(slo.PresetNames, ", "))
	case errors.As(err, new(*fs.PathError)):
		return nil, usagef(hint, "--objective: %v", err)
	case err != nil:
		return nil, usagef(hint, "--objective %s: %v", spec, err)
	}
	return o, nil
}
