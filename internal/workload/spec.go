package workload

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/tokenize"
)

// Spec is what a run sends. run's flags and the workload: section of an
// objective file both fill one in; the zero value is the default workload
// (synthetic prompts of DefaultPromptTokens, answers of DefaultOutputTokens).
// docs/WORKLOADS.md describes every field.
type Spec struct {
	// PromptTokens and OutputTokens are length distributions (ParseLengthDist).
	// With a dataset they apply where the file gives no length.
	PromptTokens string `yaml:"prompt_tokens,omitempty" json:"prompt_tokens,omitempty"`
	OutputTokens string `yaml:"output_tokens,omitempty" json:"output_tokens,omitempty"`

	// Dataset is a prompt file; Format is FormatJSONL, FormatShareGPT or
	// "" (tell by content); Order is OrderSequential (default) or
	// OrderShuffle.
	Dataset string `yaml:"dataset,omitempty" json:"dataset,omitempty"`
	Format  string `yaml:"format,omitempty" json:"format,omitempty"`
	Order   string `yaml:"order,omitempty" json:"order,omitempty"`
	// MaxPromptTokens skips dataset prompts longer than this and ends a
	// session before a turn that would be (0: no limit).
	MaxPromptTokens int `yaml:"max_prompt_tokens,omitempty" json:"max_prompt_tokens,omitempty"`

	// SharedPrefix starts every synthetic prompt with one of PrefixGroups
	// (default 1) shared prefixes of this many tokens.
	SharedPrefix int `yaml:"shared_prefix,omitempty" json:"shared_prefix,omitempty"`
	PrefixGroups int `yaml:"prefix_groups,omitempty" json:"prefix_groups,omitempty"`

	// MultiTurn makes each request a turn of a session of up to this many
	// turns that re-sends the whole history; ThinkTime is the pause
	// between an answer and the next turn.
	MultiTurn int           `yaml:"multi_turn,omitempty" json:"multi_turn,omitempty"`
	ThinkTime time.Duration `yaml:"think_time,omitempty" json:"think_time_ns,omitempty"`
	// ContextTokens caps prompt + max_tokens of a request: sessions end
	// before a turn that would exceed it and dataset entries that exceed it
	// are skipped. 0 means the server's context length when it reports one.
	ContextTokens int `yaml:"context_tokens,omitempty" json:"context_tokens,omitempty"`

	// LongContext sizes every prompt so that prompt + max_tokens is exactly
	// this many tokens.
	LongContext int `yaml:"long_context,omitempty" json:"long_context,omitempty"`
}

// Defaults of a Spec's empty fields.
const (
	// DefaultPromptTokens and DefaultOutputTokens are a typical chat
	// request: a few paragraphs in, a paragraph out.
	DefaultPromptTokens = "512"
	DefaultOutputTokens = "128"
)

// SpecError is a Spec field that cannot be used. Flag is run's flag for
// it, Key the objective file's key, so each front end can name it its way.
type SpecError struct {
	Flag, Key string
	Err       error
}

func (e *SpecError) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

func specErr(flag, key, format string, args ...any) error {
	return &SpecError{Flag: flag, Key: key, Err: fmt.Errorf(format, args...)}
}

// dists parses the length distributions, defaults applied.
func (s Spec) dists() (prompt, output LengthDist, err error) {
	if prompt, err = ParseLengthDist(cmp.Or(s.PromptTokens, DefaultPromptTokens)); err != nil {
		return prompt, output, &SpecError{Flag: "prompt-tokens", Key: "prompt_tokens", Err: err}
	}
	if output, err = ParseLengthDist(cmp.Or(s.OutputTokens, DefaultOutputTokens)); err != nil {
		return prompt, output, &SpecError{Flag: "output-tokens", Key: "output_tokens", Err: err}
	}
	return prompt, output, nil
}

// Validate reports the first field that cannot be used, as a *SpecError.
// It reads no file: New does that.
func (s Spec) Validate() error {
	prompt, output, err := s.dists()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		flag, key string
		v         int
	}{
		{"max-prompt-tokens", "max_prompt_tokens", s.MaxPromptTokens}, {"shared-prefix", "shared_prefix", s.SharedPrefix},
		{"prefix-groups", "prefix_groups", s.PrefixGroups}, {"multi-turn", "multi_turn", s.MultiTurn},
		{"context-tokens", "context_tokens", s.ContextTokens}, {"long-context", "long_context", s.LongContext},
	} {
		if f.v < 0 {
			return specErr(f.flag, f.key, "%d: must not be negative", f.v)
		}
	}
	if err := s.validateDataset(); err != nil {
		return err
	}
	if err := s.validateExclusive(); err != nil {
		return err
	}
	if s.ThinkTime < 0 {
		return specErr("think-time", "think_time", "%v: must not be negative", s.ThinkTime)
	}
	if s.ThinkTime > 0 && s.MultiTurn == 0 {
		return specErr("think-time", "think_time", "is the pause between turns of a session; use it with --multi-turn")
	}
	if s.PrefixGroups > 0 && s.SharedPrefix == 0 {
		return specErr("prefix-groups", "prefix_groups", "groups prompts by shared prefix; use it with --shared-prefix K")
	}
	return s.validateLengths(prompt, output)
}

func (s Spec) validateDataset() error {
	switch {
	case s.Format != "" && s.Format != FormatJSONL && s.Format != FormatShareGPT:
		return specErr("dataset-format", "format", "%q: want jsonl or sharegpt (or leave it out to tell by content)", s.Format)
	case s.Order != "" && s.Order != OrderSequential && s.Order != OrderShuffle:
		return specErr("dataset-order", "order", "%q: want sequential or shuffle", s.Order)
	case s.Dataset != "":
		return nil
	case s.MaxPromptTokens > 0 && s.MultiTurn == 0:
		return specErr("max-prompt-tokens", "max_prompt_tokens", "skips --dataset prompts or ends --multi-turn sessions; synthetic prompts are as long as --prompt-tokens says")
	case s.Format != "":
		return specErr("dataset-format", "format", "says how to read --dataset FILE; give the file")
	case s.Order != "":
		return specErr("dataset-order", "order", "says in which order to send --dataset FILE; give the file")
	}
	return nil
}

// validateExclusive rejects combinations that have no single meaning.
func (s Spec) validateExclusive() error {
	switch {
	case s.LongContext > 0 && s.Dataset != "":
		return specErr("long-context", "long_context", "sizes synthetic prompts; it cannot be used with --dataset")
	case s.LongContext > 0 && s.MultiTurn > 0:
		return specErr("long-context", "long_context", "sizes single requests; for sessions that grow to a context length use --multi-turn with --context-tokens")
	case s.SharedPrefix > 0 && s.Dataset != "":
		return specErr("shared-prefix", "shared_prefix", "prefixes synthetic prompts; it cannot be used with --dataset")
	case s.SharedPrefix > 0 && s.MultiTurn > 0:
		return specErr("shared-prefix", "shared_prefix", "cannot be used with --multi-turn (a session's history is its shared prefix)")
	}
	return nil
}

// validateLengths checks what can be checked before the tokenizer is known.
func (s Spec) validateLengths(prompt, output LengthDist) error {
	if s.LongContext > 0 {
		if output.Max() == 0 {
			return specErr("long-context", "long_context", "needs a bounded --output-tokens (N, uniform:MIN,MAX or a clamped normal) so that every prompt has room")
		}
		if s.LongContext-output.Max() < 1 {
			return specErr("long-context", "long_context", "%d leaves no room for a prompt beside up to %d output tokens", s.LongContext, output.Max())
		}
		if s.ContextTokens > 0 && s.LongContext > s.ContextTokens {
			return specErr("long-context", "long_context", "%d exceeds --context-tokens %d", s.LongContext, s.ContextTokens)
		}
		prompt = LengthDist{Kind: "fixed", A: float64(s.LongContext - output.Max())}
	}
	if k := s.SharedPrefix; k > 0 && prompt.Min() <= k {
		return specErr("shared-prefix", "shared_prefix", "%d: every prompt must be longer than the shared prefix, but prompts can be %d tokens (use a --prompt-tokens whose minimum is above %d)", k, prompt.Min(), k)
	}
	if c := s.ContextTokens; c > 0 && s.Dataset == "" && prompt.Min()+output.Min() > c {
		return specErr("context-tokens", "context_tokens", "%d: no request fits: prompts of at least %d tokens and answers of at least %d", c, prompt.Min(), output.Min())
	}
	return nil
}

// Env is what a workload needs to know about the run.
type Env struct {
	// Synth synthesises prompts; Counter is the counter it sizes them
	// with, which also counts dataset prompts and session histories.
	Synth   *tokenize.Synth
	Counter tokenize.Counter
	// Chat is true when requests go to a chat API (messages, template).
	Chat bool
	// Seed makes lengths, orders and prompts reproducible.
	Seed uint64
}

// Workload is a validated Spec with its dataset loaded, ready to hand out
// one Source per load point.
type Workload struct {
	spec           Spec
	env            Env
	prompt, output LengthDist
	data           *Dataset
	size           *sizer
	counts         *counts
	prefixes       *Prefixes
	context        int
}

// New validates spec, loads its dataset and returns the workload.
func New(spec Spec, env Env) (*Workload, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if env.Synth == nil || env.Counter == nil {
		return nil, errors.New("workload: a synthesiser and its counter are required")
	}
	w := &Workload{spec: spec, env: env, context: spec.ContextTokens, size: newSizer(env.Counter, env.Chat)}
	w.prompt, w.output, _ = spec.dists()
	w.counts = &counts{size: w.size, m: map[*Turn][2]int{}}
	if l, ok := env.Counter.(tokenize.Limiter); ok && w.context == 0 {
		w.context = l.MaxTokens()
	}
	if spec.MultiTurn > 0 && !env.Chat {
		return nil, specErr("multi-turn", "multi_turn", "sessions need a chat API (they send the history as messages): use --api openai-chat or ollama-chat")
	}
	if spec.SharedPrefix > 0 {
		w.prefixes = NewPrefixes(env.Synth, env.Counter, env.Chat, spec.SharedPrefix, max(spec.PrefixGroups, 1))
	}
	if spec.Dataset != "" {
		d, err := LoadDataset(spec.Dataset, spec.Format)
		if err != nil {
			return nil, &SpecError{Flag: "dataset", Key: "dataset", Err: err}
		}
		if err := w.checkDataset(d); err != nil {
			return nil, &SpecError{Flag: "dataset", Key: "dataset", Err: err}
		}
		w.data = d
	}
	return w, nil
}

// checkDataset checks that the file's entries can be sent as asked.
func (w *Workload) checkDataset(d *Dataset) error {
	multi := false
	for _, c := range d.Conversations {
		for _, t := range c.Turns {
			switch {
			case t.Messages != nil && !w.env.Chat:
				return lineError(d.Path, c.Line, "chat messages need a chat API: use --api openai-chat or ollama-chat")
			case t.Messages != nil && w.spec.MultiTurn > 0:
				return lineError(d.Path, c.Line, "a fixed list of messages cannot be replayed as a session; --multi-turn replays ShareGPT conversations")
			}
		}
		multi = multi || len(c.Turns) > 1
	}
	if w.spec.MultiTurn > 0 && !multi {
		return fmt.Errorf("%s: no conversation has more than one user turn; --multi-turn replays ShareGPT conversations (or drop --dataset for synthetic sessions)", d.Path)
	}
	return nil
}

// Source returns load point point's source, seeded so that each point's
// requests are reproducible.
func (w *Workload) Source(point int) Source {
	seed := w.env.Seed*1_000_003 + uint64(point)
	rng := rand.New(rand.NewPCG(seed, 0x776f726b))
	switch {
	case w.spec.MultiTurn > 0:
		return w.sessions(rng, seed)
	case w.data != nil:
		var turns []*Turn
		for i := range w.data.Conversations {
			for j := range w.data.Conversations[i].Turns {
				turns = append(turns, &w.data.Conversations[i].Turns[j])
			}
		}
		return &datasetSource{d: w.data, turns: turns, order: newOrder(len(turns), w.spec.Order == OrderShuffle, seed),
			counts: w.counts, output: w.output, rng: rng, maxPrompt: w.spec.MaxPromptTokens, context: w.context}
	}
	s := NewSynthetic(w.prompt, w.output, w.env.Synth, w.env.Chat, seed)
	s.Total, s.Prefixes = w.spec.LongContext, w.prefixes
	return s
}

// syntheticSessionTries bounds the draws for a first turn that fits.
const syntheticSessionTries = 100

func (w *Workload) sessions(rng *rand.Rand, seed uint64) *MultiTurn {
	m := &MultiTurn{Turns: w.spec.MultiTurn, Think: w.spec.ThinkTime, Context: w.context,
		MaxPrompt: w.spec.MaxPromptTokens, size: w.size, tries: syntheticSessionTries}
	mu := new(sync.Mutex)
	if w.data == nil {
		synthUser := synthScript{synth: w.env.Synth, prompt: w.prompt, output: w.output, mu: mu, rng: rng}
		m.start = func() script { return synthUser }
		return m
	}
	convs := w.data.Conversations
	o := newOrder(len(convs), w.spec.Order == OrderShuffle, seed)
	m.tries = len(convs)
	m.start = func() script {
		return convScript{c: &convs[o.next()], counts: w.counts, output: w.output, mu: mu, rng: rng}
	}
	return m
}
