package cli

import (
	"flag"
	"strings"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/record"
)

// defineWorkload defines run's flags that choose what is sent
// (docs/WORKLOADS.md). The length flags stay strings for run.json; the
// rest fill f.workload, the same workload.Spec an objective file's
// workload: section gives.
func (f *runFlags) defineWorkload(fs *flag.FlagSet) {
	w := &f.workload
	f.promptTokens.def, f.outputTokens.def = bench.DefaultPromptTokens, bench.DefaultOutputTokens
	fs.Var(&f.promptTokens, "prompt-tokens", "prompt length: N, uniform:MIN,MAX, normal:MEAN,SD, lognormal:MEAN,SD (repeatable: several make a workload matrix, each crossed with every --output-tokens and load)")
	fs.Var(&f.outputTokens, "output-tokens", "output length (max_tokens), same forms as --prompt-tokens (repeatable, like it); with --dataset, for prompts the file gives no length")
	fs.StringVar(&f.tokenizer, "tokenizer", bench.DefaultTokenizer, "prompt tokenizer: auto (the server's /tokenize, else tiktoken), server, cl100k_base, o200k_base, or a tokenizer.json path")
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

// lengthsFlag is a length-distribution flag that may be repeated: each use
// adds a distribution (a comma belongs to one: lognormal:8192,2048), and
// several make a workload matrix. Unused, it is its default.
type lengthsFlag struct {
	def  string
	vals []string
}

func (l *lengthsFlag) String() string {
	if len(l.vals) == 0 {
		return l.def
	}
	return strings.Join(l.vals, record.MatrixSep)
}

func (l *lengthsFlag) Set(v string) error {
	l.vals = append(l.vals, v)
	return nil
}

// specUsage is a workload error (it names its flag) as a usage error.
func specUsage(err error) error {
	if err == nil {
		return nil
	}
	return usagef(workloadHint, "%v", err)
}

// workloadHint points at the workload flags and their documentation.
const workloadHint = "servebench run -h (workloads: docs/WORKLOADS.md)"
