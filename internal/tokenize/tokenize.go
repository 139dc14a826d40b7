// Package tokenize owns token counting and exact-length prompt synthesis.
//
// A Counter counts tokens the way a server will: locally (tiktoken encodings,
// or a Hugging Face tokenizer.json BPE model), or by asking the server's own
// /tokenize endpoint (vLLM, SGLang, llama.cpp, TGI). Synth builds prompts whose
// length under a Counter is exactly the number asked for, and says which kind
// of counter vouched for it (record.SourceServer or record.SourceLocal).
package tokenize

import (
	"context"
	"errors"
)

// Counter counts the tokens of a text. Local counters fail only on bad input;
// server counters may fail like any HTTP call, so Count takes a context and
// returns an error for both.
type Counter interface {
	Count(ctx context.Context, text string) (int, error)
	// Name identifies the tokenizer, e.g. "tiktoken:cl100k_base" or "server:vllm".
	Name() string
	// Source is record.SourceServer or record.SourceLocal: what a record
	// says about a count that came from this counter.
	Source() string
}

// Message is one chat message, as an OpenAI-style API takes it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatCounter counts a whole chat request, chat template included. ok is
// false when the counter cannot apply the template (then the count is zero
// and err nil), so callers can fall back to counting content.
type ChatCounter interface {
	CountChat(ctx context.Context, messages []Message) (n int, ok bool, err error)
}

// Limiter is implemented by counters that know the model's context length
// (vLLM's max_model_len, TGI's max_input_tokens). Zero means unknown.
type Limiter interface {
	MaxTokens() int
}

var (
	// ErrTooLong means a prompt of the requested length cannot be sent: it
	// exceeds the model's context length.
	ErrTooLong = errors.New("prompt longer than the model's context length")
	// ErrTooShort means no non-empty prompt is that short, usually because
	// the tokenizer adds special tokens (a BOS) to every prompt.
	ErrTooShort = errors.New("prompt shorter than the shortest non-empty prompt")
	// ErrInexact means synthesis gave up before reaching the exact length;
	// the returned prompt is usable and its Tokens field says how long it is.
	ErrInexact = errors.New("could not reach the exact prompt length")
	// ErrUnsupported means a tokenizer.json uses a component this package
	// does not implement; the message names it.
	ErrUnsupported = errors.New("unsupported tokenizer component")
)
