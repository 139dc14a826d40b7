package cli

import (
	"errors"
	"flag"

	"github.com/servebench/servebench/internal/tokenize"
	"github.com/servebench/servebench/internal/workload"
)

// defineWorkload defines run's flags that choose what is sent
// (docs/WORKLOADS.md). The length flags stay strings for run.json; the
// rest fill f.workload, the same workload.Spec an objective file's
// workload: section gives.
func (f *runFlags) defineWorkload(fs *flag.FlagSet) {
	w := &f.workload
	fs.StringVar(&f.promptTokens, "prompt-tokens", defaultPromptTokens, "prompt length: N, uniform:MIN,MAX, normal:MEAN,SD, lognormal:MEAN,SD")
	fs.StringVar(&f.outputTokens, "output-tokens", defaultOutputTokens, "output length (max_tokens), same forms as --prompt-tokens; with --dataset, for prompts the file gives no length")
	fs.StringVar(&f.tokenizer, "tokenizer", defaultTokenizer, "prompt tokenizer: auto (the server's /tokenize, else tiktoken), server, cl100k_base, o200k_base, or a tokenizer.json path")
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", true, "ask the server to generate exactly --output-tokens (ignore_eos, min_tokens) where it can")
	fs.StringVar(&w.Dataset, "dataset", "", "send prompts from FILE: JSON Lines ({\"prompt\": ..., \"output_tokens\": N} per line) or ShareGPT conversations")
	fs.StringVar(&w.Format, "dataset-format", "", "format of --dataset: jsonl or sharegpt (default: tell by content)")
	fs.StringVar(&w.Order, "dataset-order", "", "order of --dataset prompts: sequential (default) or shuffle (seeded)")
	fs.IntVar(&w.MaxPromptTokens, "max-prompt-tokens", 0, "skip dataset prompts longer than N tokens; end a session before a longer turn (0: no limit)")
	fs.IntVar(&w.SharedPrefix, "shared-prefix", 0, "start every prompt with a shared prefix of K tokens, to exercise prefix caching (0: none)")
	fs.IntVar(&w.PrefixGroups, "prefix-groups", 0, "with --shared-prefix: number of distinct shared prefixes prompts are spread over (default 1)")
	fs.IntVar(&w.MultiTurn, "multi-turn", 0, "sessions of up to T turns, each re-sending the history with the server's answers (chat APIs; 0: single requests)")
	fs.DurationVar(&w.ThinkTime, "think-time", 0, "with --multi-turn: pause between an answer and the session's next turn")
	fs.IntVar(&w.ContextTokens, "context-tokens", 0, "largest prompt + max_tokens of a request: sessions end before exceeding it, longer dataset entries are skipped (0: the server's context length when known)")
	fs.IntVar(&w.LongContext, "long-context", 0, "size every prompt so that prompt + max_tokens is exactly N tokens (a context-capacity check)")
}

// newSource returns the workload source of each load point. Each point
// gets its own seeded source so its lengths are reproducible. counter is
// the one synth sizes prompts with; scale is the target's time scale, which
// the think time (model time) is divided by.
func (f *runFlags) newSource(synth *tokenize.Synth, counter tokenize.Counter, chat bool, scale float64) (func(point int) workload.Source, error) {
	spec := f.workload
	spec.PromptTokens, spec.OutputTokens = f.promptTokens, f.outputTokens
	spec.ThinkTime = wallTime(spec.ThinkTime, scale)
	w, err := workload.New(spec, workload.Env{Synth: synth, Counter: counter, Chat: chat, Seed: f.seed})
	if se := (*workload.SpecError)(nil); errors.As(err, &se) {
		return nil, usagef("servebench run -h (workloads: docs/WORKLOADS.md)", "%v", err)
	}
	if err != nil {
		return nil, err
	}
	return w.Source, nil
}

// workloadRecord is the workload as run.json keeps it: the Spec when it
// asks for more than two length distributions, else nothing (the lengths
// are in run.json already).
func (f *runFlags) workloadRecord() any {
	spec := f.workload
	if spec == (workload.Spec{}) {
		return nil
	}
	spec.PromptTokens, spec.OutputTokens = f.promptTokens, f.outputTokens
	return spec
}
