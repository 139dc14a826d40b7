package cli

import (
	"flag"

	"github.com/servebench/servebench/internal/tokenize"
	"github.com/servebench/servebench/internal/workload"
)

// defineWorkload defines run's flags that choose what is sent.
func (f *runFlags) defineWorkload(fs *flag.FlagSet) {
	fs.StringVar(&f.promptTokens, "prompt-tokens", defaultPromptTokens, "prompt length: N, uniform:MIN,MAX, normal:MEAN,SD, lognormal:MEAN,SD")
	fs.StringVar(&f.outputTokens, "output-tokens", defaultOutputTokens, "output length (max_tokens), same forms as --prompt-tokens")
	fs.StringVar(&f.tokenizer, "tokenizer", defaultTokenizer, "prompt tokenizer: auto (the server's /tokenize, else tiktoken), server, cl100k_base, o200k_base, or a tokenizer.json path")
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", true, "ask the server to generate exactly --output-tokens (ignore_eos, min_tokens) where it can")
}

// newSource returns the workload source of each load point. Each point
// gets its own seeded source so its lengths are reproducible.
func (f *runFlags) newSource(plan *loadPlan, synth *tokenize.Synth, chat bool) func(point int) workload.Source {
	return func(point int) workload.Source {
		return workload.NewSynthetic(plan.prompt, plan.output, synth, chat, f.seed*1_000_003+uint64(point))
	}
}
