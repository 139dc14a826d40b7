package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/sweep"
)

const planArgsHint = "servebench sweep ... --param tp=1,2 --plan-config internal/plan/testdata/models/Llama-3.1-8B --plan-args '--gpu H100-SXM --tp {tp}'"

// planArgsRefused are plan's flags that --plan-args may not give, and
// why: the sweep gives the model and the workload, and a plan set beside
// a sweep's measurements is neither a device list nor a comparison of its
// own.
var planArgsRefused = map[string]string{
	"config":        "the model is --plan-config",
	"gguf":          "the model is --plan-config",
	"compare":       "the sweep compares each configuration with its own run",
	"json":          "the plan goes into sweep.json",
	"list-devices":  "the sweep plans one device: give it with --gpu NAME",
	"prompt-tokens": "the sweep's workload is planned (its --prompt-tokens)",
	"output-tokens": "the sweep's workload is planned (its --output-tokens)",
	"concurrency":   "the sweep's workload is planned (its highest --concurrency)",
	"ttft":          "the sweep's --objective judges it",
	"min-tps":       "the sweep's --objective judges it",
}

// planSpec is configuration c's plan as --plan-config and --plan-args
// ask for it (nil: none asked for), for the sweep's workload (p; nil
// without a load: plan's defaults). The model and the device are read
// now, so that a plan that cannot be made stops the sweep before any
// server starts.
func (s *sweepFlags) planSpec(c launch.Config, p *bench.Plan) (*sweep.PlanSpec, error) {
	if s.planConfig == "" {
		return nil, nil
	}
	f, words, err := s.planArgsFor(c)
	if err != nil {
		return nil, err
	}
	setup := f.setup()
	if _, _, err := setup.Load(); err != nil {
		if errors.As(err, new(*plan.ModelError)) {
			return nil, usagef("--plan-config takes a Hugging Face config.json (or its directory) or a GGUF file", "--plan-config: %v", err)
		}
		return nil, planArgsError(c, planError(err))
	}
	spec := &sweep.PlanSpec{Setup: setup, Args: words}
	spec.Workload, spec.Warnings = p.PlanWorkload(f.Workload)
	return spec, nil
}

// planArgsFor parses --plan-args as plan's flags, c's values in place of
// their placeholders, refusing what the sweep gives itself; the model is
// --plan-config.
func (s *sweepFlags) planArgsFor(c launch.Config) (*planFlags, []string, error) {
	var words []string
	var err error
	if strings.TrimSpace(s.planArgs) != "" {
		if words, err = launch.Split(s.planArgs); err == nil {
			words, err = launch.ExpandAll(words, c.Values)
		}
	}
	if err != nil {
		return nil, nil, usagef(planArgsHint, "--plan-args: %v", err)
	}
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f planFlags
	f.bind(fs)
	if err := fs.Parse(words); err != nil {
		return nil, nil, usagef(planArgsHint, "--plan-args%s: %v", forConfig(c), err)
	}
	if fs.NArg() > 0 {
		return nil, nil, usagef(planArgsHint, "--plan-args%s: unexpected argument %q (the model is --plan-config)", forConfig(c), fs.Arg(0))
	}
	var refused error
	fs.Visit(func(fl *flag.Flag) {
		if why, ok := planArgsRefused[fl.Name]; ok && refused == nil {
			refused = usagef(planArgsHint, "--plan-args may not give --%s: %s", fl.Name, why)
		}
	})
	if refused != nil {
		return nil, nil, refused
	}
	if f.gpus == "" || strings.Contains(f.gpus, ",") {
		return nil, nil, usagef("servebench plan --list-devices", "--plan-args%s: give exactly one device, --gpu NAME (got %q)", forConfig(c), f.gpus)
	}
	f.config = s.planConfig
	if strings.HasSuffix(s.planConfig, ".gguf") {
		f.config, f.gguf = "", s.planConfig
	}
	if err := f.deployment(fs); err != nil {
		return nil, nil, planArgsError(c, err)
	}
	return &f, words, nil
}

// planArgsError names --plan-args and the configuration in an error of
// plan's flags.
func planArgsError(c launch.Config, err error) error {
	e := hinted(err)
	e.Err = fmt.Errorf("--plan-args%s: %w", forConfig(c), e.Err)
	return e
}

// forConfig names a configuration in an error, when the sweep has
// parameters.
func forConfig(c launch.Config) string {
	if len(c.Names) == 0 {
		return ""
	}
	return " for " + c.String()
}
