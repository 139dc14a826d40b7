package workload

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/tokenize"
)

// words is a server-like counter with the simulator's tokenizer: one token
// per word plus a BOS, and a Llama-3-shaped chat template (5 tokens per
// message, 4 for the generation prompt) when chat is true.
type words struct {
	chat   bool
	limit  int
	counts atomic.Int64
}

func (w *words) Count(_ context.Context, text string) (int, error) {
	w.counts.Add(1)
	return 1 + len(strings.Fields(text)), nil
}

func (w *words) CountChat(_ context.Context, msgs []tokenize.Message) (int, bool, error) {
	if !w.chat {
		return 0, false, nil
	}
	w.counts.Add(1)
	n := 1 + 4
	for _, m := range msgs {
		n += 5 + len(strings.Fields(m.Content))
	}
	return n, true, nil
}

func (w *words) Name() string   { return "words" }
func (w *words) Source() string { return record.SourceServer }
func (w *words) MaxTokens() int { return w.limit }

// env returns a workload environment over counter c.
func env(c tokenize.Counter, chat bool) Env {
	return Env{Synth: tokenize.NewSynth(c, 7), Counter: c, Chat: chat, Seed: 1}
}

func wordCount(s string) int { return len(strings.Fields(s)) }

func asSpecError(err error, se **SpecError) bool { return errors.As(err, se) }
