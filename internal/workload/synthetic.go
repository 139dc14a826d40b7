package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/servebench/servebench/internal/tokenize"
)

// Item is one request's content, before it meets an API.
type Item struct {
	// Prompt is the text; for chat APIs it is one user message. Empty when
	// Messages is set.
	Prompt string
	// Messages is a whole chat (a dataset's fixed messages, or a
	// multi-turn session's history and new user message).
	Messages []tokenize.Message
	// Want is the prompt length asked for; Tokens what the tokenizer
	// counted (they differ only when synthesis could not be exact).
	Want, Tokens int
	// Source says who counted Tokens (record.SourceServer / SourceLocal).
	Source string
	// Templated is true when Tokens includes the chat template.
	Templated bool
	MaxTokens int
	// Session and Turn number a multi-turn session's requests, from 1;
	// both are 0 for a single request.
	Session, Turn int
	// TraceLine is the line of a replayed trace this request is; 0
	// otherwise.
	TraceLine int64

	conv *conversation // the session this turn continues
}

// Source produces the requests of a run, one at a time.
type Source interface {
	Next(ctx context.Context) (Item, error)
}

// Synthetic draws prompt and output lengths from seeded distributions and
// synthesises prompts of exactly the drawn length.
type Synthetic struct {
	Prompt, Output LengthDist
	Synth          *tokenize.Synth
	// Chat sizes prompts as chat requests (template included where the
	// server can count it).
	Chat bool
	// Total, when set, fixes prompt + max_tokens: each prompt is Total
	// less the drawn output length (long-context requests).
	Total int
	// Prefixes, when set, starts every prompt with one of a few shared
	// prefixes.
	Prefixes *Prefixes
	rng      *rand.Rand
	// Inexact counts prompts whose length could not be made exact.
	Inexact int
}

// NewSynthetic returns a Synthetic source seeded with seed.
func NewSynthetic(prompt, output LengthDist, synth *tokenize.Synth, chat bool, seed uint64) *Synthetic {
	return &Synthetic{Prompt: prompt, Output: output, Synth: synth, Chat: chat,
		rng: rand.New(rand.NewPCG(seed, 0x776f726b))}
}

// Next returns the next request. A prompt that synthesis could not make
// exact is still returned (its Tokens says its length); other failures end
// the source.
func (s *Synthetic) Next(ctx context.Context) (Item, error) {
	n, out := s.Prompt.Draw(s.rng), s.Output.Draw(s.rng)
	if s.Total > 0 {
		n = s.Total - out
	}
	var p tokenize.Prompt
	var err error
	switch {
	case s.Prefixes != nil:
		p, err = s.Prefixes.Prompt(ctx, s.rng.IntN(s.Prefixes.Groups), n)
	case s.Chat:
		p, err = s.Synth.Chat(ctx, n)
	default:
		p, err = s.Synth.Prompt(ctx, n)
	}
	if errors.Is(err, tokenize.ErrInexact) {
		s.Inexact++
		err = nil
	}
	if err != nil {
		return Item{}, err
	}
	return Item{Prompt: p.Text, Want: n, Tokens: p.Tokens, Source: p.Source, Templated: p.Templated, MaxTokens: out}, nil
}

// Prefixes builds prompts that start with one of Groups shared prefixes of
// K tokens each, so a server with prefix caching can reuse their KV cache.
// Each prefix is synthesised once, on first use, and shared by every load
// point. Safe for concurrent use.
type Prefixes struct {
	K, Groups int
	synth     *tokenize.Synth
	size      *sizer

	mu     sync.Mutex
	shared []tokenize.Prompt
}

// NewPrefixes returns groups prefixes of k tokens under synth. counter
// must be the counter synth sizes with; chat sizes requests as chat.
func NewPrefixes(synth *tokenize.Synth, counter tokenize.Counter, chat bool, k, groups int) *Prefixes {
	return &Prefixes{K: k, Groups: max(groups, 1), synth: synth, size: newSizer(counter, chat),
		shared: make([]tokenize.Prompt, max(groups, 1))}
}

// prefix returns prefix g, synthesising it on first use.
func (p *Prefixes) prefix(ctx context.Context, g int) (tokenize.Prompt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shared[g].Text != "" {
		return p.shared[g], nil
	}
	pre, err := p.synth.Prefix(ctx, p.K)
	if err != nil {
		return tokenize.Prompt{}, fmt.Errorf("shared prefix of %d tokens: %w", p.K, err)
	}
	p.shared[g] = pre
	return pre, nil
}

// Prompt returns a prompt starting with prefix g whose request is exactly
// n tokens (as Synthetic sizes requests: template included where the
// counter can count it). The error is tokenize.ErrInexact, with a usable
// prompt, when the length could not be made exact.
func (p *Prefixes) Prompt(ctx context.Context, g, n int) (tokenize.Prompt, error) {
	pre, err := p.prefix(ctx, g)
	if err != nil {
		return tokenize.Prompt{}, err
	}
	text, err := p.size.textTarget(ctx, n)
	if err != nil {
		return tokenize.Prompt{}, err
	}
	out, err := p.synth.WithPrefix(ctx, pre, text)
	if err != nil && !errors.Is(err, tokenize.ErrInexact) {
		return tokenize.Prompt{}, fmt.Errorf("%d-token prompt after a %d-token shared prefix: %w", n, p.K, err)
	}
	switch {
	case !p.size.chat: // Synth counted the prompt as it is sent
	case p.size.isTemplated(): // the template's cost was measured on one word; check it
		if out.Tokens, err = p.size.count(ctx, user(out.Text)); err != nil {
			return tokenize.Prompt{}, err
		}
		out.Templated = true
	default:
		out.Tokens -= p.size.base
	}
	if out.Tokens != n {
		return out, fmt.Errorf("%w: asked for %d tokens, got %d", tokenize.ErrInexact, n, out.Tokens)
	}
	return out, nil
}
