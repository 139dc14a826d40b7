package workload

import (
	"cmp"
	"fmt"

	"github.com/servebench/servebench/internal/record"
)

// Lengths is one cell of a workload matrix: a prompt- and an output-length
// distribution (ParseLengthDist forms; empty means the default).
type Lengths struct {
	PromptTokens string `yaml:"prompt_tokens,omitempty" json:"prompt_tokens,omitempty"`
	OutputTokens string `yaml:"output_tokens,omitempty" json:"output_tokens,omitempty"`
}

// Cross is the cross product of prompt and output length distributions in
// the order a matrix runs them: prompts outer, outputs inner. Each
// distribution is in canonical form (LengthDist.String), so that
// "fixed:128" and "128" name one cell; a distribution given twice is an
// error naming the flag.
func Cross(prompts, outputs []string) ([]Lengths, error) {
	ps, err := canonical(prompts, "prompt-tokens", "prompt_tokens", DefaultPromptTokens)
	if err != nil {
		return nil, err
	}
	os, err := canonical(outputs, "output-tokens", "output_tokens", DefaultOutputTokens)
	if err != nil {
		return nil, err
	}
	var cells []Lengths
	for _, p := range ps {
		for _, o := range os {
			cells = append(cells, Lengths{PromptTokens: p, OutputTokens: o})
		}
	}
	return cells, nil
}

// canonical parses each distribution (def when none is given) and rejects
// repeats.
func canonical(xs []string, flag, key, def string) ([]string, error) {
	if len(xs) == 0 {
		xs = []string{def}
	}
	var out []string
	seen := map[string]string{}
	for _, x := range xs {
		d, err := ParseLengthDist(x)
		if err != nil {
			return nil, &SpecError{Flag: flag, Key: key, Err: err}
		}
		if first, ok := seen[d.String()]; ok {
			return nil, specErr(flag, key, "%q repeats %q: give each length distribution once", x, first)
		}
		seen[d.String()] = x
		out = append(out, d.String())
	}
	return out, nil
}

// Label names the cell as its points' record.Load.Workload.
func (l Lengths) Label() string {
	return record.WorkloadLabel(cmp.Or(l.PromptTokens, DefaultPromptTokens), cmp.Or(l.OutputTokens, DefaultOutputTokens))
}

// Cell is the cell as run.json records it.
func (l Lengths) Cell() record.WorkloadCell {
	return record.NewWorkloadCell(cmp.Or(l.PromptTokens, DefaultPromptTokens), cmp.Or(l.OutputTokens, DefaultOutputTokens))
}

// Matrix returns base once per cell, its lengths set to the cell's: the
// workloads of a matrix run. Workloads that cannot be crossed are refused:
// a dataset or sessions decide their own prompt lengths, and a long-context
// check sizes every prompt to one total.
func Matrix(base Spec, cells []Lengths) ([]Spec, error) {
	if len(cells) > 1 {
		for _, f := range []struct {
			flag, key string
			on        bool
		}{
			{"dataset", "dataset", base.Dataset != ""},
			{"multi-turn", "multi_turn", base.MultiTurn > 0},
			{"long-context", "long_context", base.LongContext > 0},
		} {
			if f.on {
				return nil, specErr(f.flag, f.key, "cannot be crossed with several --prompt-tokens or --output-tokens (a workload matrix of %d cells); give one of each, or run each workload on its own", len(cells))
			}
		}
	}
	out := make([]Spec, len(cells))
	for i, c := range cells {
		s := base
		s.PromptTokens, s.OutputTokens = c.PromptTokens, c.OutputTokens
		if err := s.Validate(); err != nil && len(cells) > 1 {
			return nil, fmt.Errorf("workload %s: %w", c.Label(), err)
		} else if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}
