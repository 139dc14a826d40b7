package workload

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/servebench/servebench/internal/tokenize"
)

// Item is one request's content, before it meets an API.
type Item struct {
	// Prompt is the text; for chat APIs it is one user message.
	Prompt string
	// Want is the prompt length asked for; Tokens what the tokenizer
	// counted (they differ only when synthesis could not be exact).
	Want, Tokens int
	// Source says who counted Tokens (record.SourceServer / SourceLocal).
	Source string
	// Templated is true when Tokens includes the chat template.
	Templated bool
	MaxTokens int
}

// Source produces the requests of a run, one at a time.
type Source interface {
	Next(ctx context.Context) (Item, error)
}

// Synthetic draws prompt and output lengths from seeded distributions and
// synthesises prompts of exactly the drawn length.
type Synthetic struct {
	Prompt, Output Dist
	Synth          *tokenize.Synth
	// Chat sizes prompts as chat requests (template included where the
	// server can count it).
	Chat bool
	rng  *rand.Rand
	// Inexact counts prompts whose length could not be made exact.
	Inexact int
}

// NewSynthetic returns a Synthetic source seeded with seed.
func NewSynthetic(prompt, output Dist, synth *tokenize.Synth, chat bool, seed uint64) *Synthetic {
	return &Synthetic{Prompt: prompt, Output: output, Synth: synth, Chat: chat,
		rng: rand.New(rand.NewPCG(seed, 0x776f726b))}
}

// Next returns the next request. A prompt that synthesis could not make
// exact is still returned (its Tokens says its length); other failures end
// the source.
func (s *Synthetic) Next(ctx context.Context) (Item, error) {
	n, out := s.Prompt.Draw(s.rng), s.Output.Draw(s.rng)
	var p tokenize.Prompt
	var err error
	if s.Chat {
		p, err = s.Synth.Chat(ctx, n)
	} else {
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
