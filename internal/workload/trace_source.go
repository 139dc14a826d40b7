package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/tokenize"
)

// Arrivals reads the trace's window again and yields each request's replay
// offset and line, in order, stopping early when yield returns false;
// the error says why it stopped before the window's end (the file changed
// or went away since ScanTrace). It holds a line at a time.
func (t *Trace) Arrivals(yield func(off time.Duration, line int64) bool) error {
	w, err := openWindow(t.Options)
	if err != nil {
		return err
	}
	defer w.close()
	for n := 0; ; n++ {
		r, off, err := w.next()
		if err == io.EOF {
			if n != t.Shape.Requests {
				return fmt.Errorf("%s: %w (%d requests, %d at first)", t.Options.Path, errTraceChanged, n, t.Shape.Requests)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if !yield(off, r.Line) {
			return nil
		}
	}
}

// Source returns the source of the window's requests, in order: each
// Item's TraceLine says which line it is. With hash ids, a prompt is built
// of blocks whose text each id fixes (tokenize.Synth.Blocks), so that two
// requests sharing an id share that block's tokens at the same place; the
// chat template's tokens, when counted, come off the end of the prompt.
// Without, a prompt is words of its own, as synthetic prompts are.
func (t *Trace) Source(env Env) (Source, error) {
	if env.Synth == nil || env.Counter == nil {
		return nil, errors.New("workload: a synthesiser and its counter are required")
	}
	w, err := openWindow(t.Options)
	if err != nil {
		return nil, err
	}
	return &traceSource{t: t, w: w, env: env, size: newSizer(env.Counter, env.Chat)}, nil
}

type traceSource struct {
	t    *Trace
	env  Env
	size *sizer
	mu   sync.Mutex
	w    *window
	done bool
	// Inexact counts prompts whose length could not be made exact.
	Inexact int
}

// Next returns the window's next request; io.EOF after the last (the file
// is then closed).
func (s *traceSource) Next(ctx context.Context) (Item, error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return Item{}, io.EOF
	}
	r, _, err := s.w.next()
	if err != nil {
		s.done = true
		s.w.close()
	}
	s.mu.Unlock()
	if err != nil {
		return Item{}, err
	}
	p, err := s.prompt(ctx, r)
	if errors.Is(err, tokenize.ErrInexact) {
		s.Inexact++
		err = nil
	}
	if err != nil {
		return Item{}, &TraceError{Path: s.t.Options.Path, Line: r.Line, Err: err}
	}
	return Item{Prompt: p.Text, Want: r.Input, Tokens: p.Tokens, Source: p.Source, Templated: p.Templated,
		MaxTokens: r.Output, TraceLine: r.Line}, nil
}

// prompt builds request r's prompt.
func (s *traceSource) prompt(ctx context.Context, r TraceRequest) (tokenize.Prompt, error) {
	if r.HashIDs == nil {
		if s.env.Chat {
			return s.env.Synth.Chat(ctx, r.Input)
		}
		return s.env.Synth.Prompt(ctx, r.Input)
	}
	target, err := s.size.textTarget(ctx, r.Input)
	if err != nil {
		return tokenize.Prompt{}, err
	}
	blocks, tail := traceBlocks(r, s.t.Options.blockSize(), r.Input-target)
	if blocks == nil && tail <= 0 {
		return tokenize.Prompt{}, fmt.Errorf("a prompt of %d tokens is shorter than the chat template's %d", r.Input, r.Input-target)
	}
	p, err := s.env.Synth.Blocks(ctx, blocks, tail)
	if err != nil && !errors.Is(err, tokenize.ErrInexact) {
		return p, err
	}
	switch {
	case !s.size.chat:
	case s.size.isTemplated():
		if p.Tokens, err = s.size.count(ctx, user(p.Text)); err != nil {
			return tokenize.Prompt{}, err
		}
		p.Templated = true
	default:
		p.Tokens -= s.size.base
	}
	if p.Tokens != r.Input {
		return p, fmt.Errorf("%w: asked for %d tokens, got %d", tokenize.ErrInexact, r.Input, p.Tokens)
	}
	return p, nil
}

// traceBlocks are the blocks of r's prompt, the last one partial when the
// prompt does not fill it, and the tokens after them that no id names;
// cut tokens (the chat template's) come off the end.
func traceBlocks(r TraceRequest, bs, cut int) ([]tokenize.Block, int) {
	var out []tokenize.Block
	left := r.Input
	for _, id := range r.HashIDs {
		k := min(bs, left)
		out = append(out, tokenize.Block{ID: uint64(id), Tokens: k})
		left -= k
	}
	tail := left
	// the template's tokens come out of the tail, then the last blocks
	for cut > 0 && tail > 0 {
		d := min(cut, tail)
		tail, cut = tail-d, cut-d
	}
	for cut > 0 && len(out) > 0 {
		last := &out[len(out)-1]
		d := min(cut, last.Tokens)
		last.Tokens, cut = last.Tokens-d, cut-d
		if last.Tokens == 0 {
			out = out[:len(out)-1]
		}
	}
	if cut < 0 { // the content counts more than the request (an untemplated chat): add to the tail
		tail -= cut
	}
	return out, tail
}
