package tokenize

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/servebench/servebench/internal/record"
)

// maxFixes bounds the corrections after a prompt's first count. Counts add
// up word by word for the tokenizers servebench knows, so the first count is
// nearly always exact; a fix costs one more count.
const maxFixes = 4

// Prompt is a synthesised prompt and what is known about its length.
type Prompt struct {
	Text string
	// Tokens is the prompt's length as the counter measured it: with the
	// chat template when Templated, else the text itself (plus special
	// tokens the counter adds, such as a BOS), or, for Chat without a
	// template, the content alone.
	Tokens int
	// Source is record.SourceServer or record.SourceLocal.
	Source string
	// Counter is the counter's Name().
	Counter string
	// Templated is true when Tokens counts the whole chat request.
	Templated bool
	// PrefixTokens is the length of the shared prefix at the start of Text.
	PrefixTokens int
}

// SynthStats counts the work a Synth has done.
type SynthStats struct {
	Prompts     int64 // prompts returned
	Counts      int64 // counter calls, calibration included
	Calibration int64 // counter calls spent calibrating
	FirstTry    int64 // prompts exact on their first count
	Inexact     int64 // prompts returned with ErrInexact
	Unverified  int64 // prompts returned exact by construction, not counted
}

// Synth builds prompts of an exact token length under a Counter from a
// seeded stream of common English words, so prompts differ per request (no
// accidental prefix-cache hits) yet a seed reproduces a run. It measures the
// words once (calibration) and builds each prompt to the length the measured
// costs add up to. It verifies a sample of prompts with a count (see
// mustCount) and corrects the rare miss; after a miss it counts them all.
// Safe for concurrent use; with concurrent callers, which prompt a caller
// gets depends on call order.
type Synth struct {
	counter Counter
	// blockSeed keys the text of Blocks' blocks: the same seed builds the
	// same block for an ID in every run.
	blockSeed uint64

	mu  sync.Mutex
	rng *rand.Rand

	calMu      sync.Mutex
	text, chat *calibration
	noChat     bool

	prompts, counts, calCounts, firstTry, inexact, unverified atomic.Int64
	// built numbers the prompts built, for the verification sample;
	// missed is set by the first sampled prompt whose count was off.
	built  atomic.Int64
	missed atomic.Bool
}

// NewSynth returns a Synth for counter, seeded with seed.
func NewSynth(counter Counter, seed uint64) *Synth {
	return &Synth{counter: counter, blockSeed: seed, rng: rand.New(rand.NewPCG(seed, 0x7365727665))}
}

// Stats returns counts of the work done so far.
func (s *Synth) Stats() SynthStats {
	return SynthStats{Prompts: s.prompts.Load(), Counts: s.counts.Load(), Calibration: s.calCounts.Load(),
		FirstTry: s.firstTry.Load(), Inexact: s.inexact.Load(), Unverified: s.unverified.Load()}
}

// Prompt returns a prompt of exactly n tokens. It fails with ErrTooLong when
// n exceeds the counter's known context length, ErrTooShort when no
// non-empty prompt is that short, and ErrInexact (with a usable prompt)
// when corrections ran out.
func (s *Synth) Prompt(ctx context.Context, n int) (Prompt, error) {
	cal, err := s.calibration(ctx, false)
	if err != nil {
		return Prompt{}, err
	}
	return s.build(ctx, cal, piece{}, n, n)
}

// Prefix returns a prompt of exactly k tokens meant to be shared: pass it to
// WithPrefix to build prompts that start with it.
func (s *Synth) Prefix(ctx context.Context, k int) (Prompt, error) {
	p, err := s.Prompt(ctx, k)
	p.PrefixTokens = p.Tokens
	return p, err
}

// WithPrefix returns a prompt of exactly n tokens that starts with prefix's
// text and continues with words of its own.
func (s *Synth) WithPrefix(ctx context.Context, prefix Prompt, n int) (Prompt, error) {
	if prefix.Text == "" || prefix.PrefixTokens <= 0 {
		return Prompt{}, errors.New("synthesise prompt: prefix is empty; build it with Prefix")
	}
	if n <= prefix.PrefixTokens {
		return Prompt{}, fmt.Errorf("%w: %d tokens asked, but the shared prefix alone is %d", ErrTooShort, n, prefix.PrefixTokens)
	}
	cal, err := s.calibration(ctx, false)
	if err != nil {
		return Prompt{}, err
	}
	p, err := s.build(ctx, cal, piece{prefix.Text, prefix.PrefixTokens}, n, n)
	p.PrefixTokens = prefix.PrefixTokens
	return p, err
}

// Chat returns the content of a single user message such that the chat
// request is exactly n tokens, template included, when the counter can
// count chat messages (vLLM's /tokenize); otherwise the content itself is n
// tokens and Templated is false (the server's usage then tells the truth).
func (s *Synth) Chat(ctx context.Context, n int) (Prompt, error) {
	cal, err := s.calibration(ctx, true)
	if err != nil {
		return Prompt{}, err
	}
	if cal != nil {
		p, err := s.build(ctx, cal, piece{}, n, n)
		p.Templated = true
		return p, err
	}
	if cal, err = s.calibration(ctx, false); err != nil {
		return Prompt{}, err
	}
	// Content tokens: the text's count less what an empty prompt counts.
	p, err := s.build(ctx, cal, piece{}, n+cal.base, n)
	p.Tokens -= cal.base
	return p, err
}

// calibration returns the calibration for a mode, measuring it on first
// use. For chat it returns nil (and no error) when the counter cannot count
// chat messages.
func (s *Synth) calibration(ctx context.Context, chat bool) (*calibration, error) {
	s.calMu.Lock()
	defer s.calMu.Unlock()
	if s.text == nil {
		local := s.counter.Source() != record.SourceServer
		cal, err := calibrate(ctx, s.countFunc(s.counter.Count, &s.calCounts), local, nil)
		if err != nil {
			return nil, fmt.Errorf("synthesise prompt with %s: %w", s.counter.Name(), err)
		}
		cal.count = s.counter.Count
		s.text = cal
	}
	if !chat {
		return s.text, nil
	}
	if s.chat == nil && !s.noChat {
		cal, err := s.calibrateChat(ctx)
		if err != nil {
			return nil, fmt.Errorf("synthesise chat prompt with %s: %w", s.counter.Name(), err)
		}
		s.chat, s.noChat = cal, cal == nil
	}
	return s.chat, nil
}

func (s *Synth) calibrateChat(ctx context.Context) (*calibration, error) {
	cc, ok := s.counter.(ChatCounter)
	if !ok {
		return nil, nil
	}
	countChat := func(ctx context.Context, text string) (int, error) {
		n, ok, err := cc.CountChat(ctx, []Message{{Role: "user", Content: text}})
		if err == nil && !ok {
			err = errNoChat
		}
		return n, err
	}
	cal, err := calibrate(ctx, s.countFunc(countChat, &s.calCounts), false, s.text)
	if errors.Is(err, errNoChat) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cal.count = countChat
	return cal, nil
}

var errNoChat = errors.New("counter cannot count chat messages")

// countFunc wraps count so that every call is tallied in Counts and in also.
func (s *Synth) countFunc(count func(context.Context, string) (int, error), also *atomic.Int64) func(context.Context, string) (int, error) {
	return func(ctx context.Context, text string) (int, error) {
		s.counts.Add(1)
		if also != nil {
			also.Add(1)
		}
		return count(ctx, text)
	}
}

// build makes a prompt whose count under cal is n: head (an opener, or the
// shared prefix), then words drawn from the seeded stream. want is what the
// caller asked for, for error messages.
func (s *Synth) build(ctx context.Context, cal *calibration, head piece, n, want int) (Prompt, error) {
	if err := s.checkLength(cal, head, n, want); err != nil {
		return Prompt{}, err
	}
	s.mu.Lock()
	rng := newDraw(s.rng.Uint64(), s.rng.Uint64())
	s.mu.Unlock()

	if head.text == "" {
		head = pickOpener(rng, cal.openers, n)
	}
	if !s.mustCount() {
		// Exact by construction: the measured costs add up to n.
		s.prompts.Add(1)
		s.unverified.Add(1)
		return Prompt{Text: wordsText(rng, cal, head, n-head.cost), Tokens: n, Source: s.counter.Source(), Counter: s.counter.Name()}, nil
	}
	pieces := fillWords(rng, cal, n-head.cost)
	count := s.countFunc(cal.count, nil)
	got, err := count(ctx, joinPieces(head, pieces))
	if err != nil {
		return Prompt{}, fmt.Errorf("synthesise %d-token prompt: %w", want, err)
	}
	if got == n {
		s.firstTry.Add(1)
	} else {
		s.missed.Store(true)
	}
	for fix := 0; got != n && fix < maxFixes; fix++ {
		var ok bool
		if pieces, ok = correct(rng, cal, pieces, n-got); !ok {
			break
		}
		if got, err = count(ctx, joinPieces(head, pieces)); err != nil {
			return Prompt{}, fmt.Errorf("synthesise %d-token prompt: %w", want, err)
		}
	}
	s.prompts.Add(1)
	p := Prompt{Text: joinPieces(head, pieces), Tokens: got, Source: s.counter.Source(), Counter: s.counter.Name()}
	if got != n {
		s.inexact.Add(1)
		return p, fmt.Errorf("%w: asked for %d tokens, got %d after %d corrections", ErrInexact, n, got, maxFixes)
	}
	return p, nil
}

func (s *Synth) checkLength(cal *calibration, head piece, n, want int) error {
	if want <= 0 {
		return fmt.Errorf("%w: %d tokens asked; ask for at least 1", ErrTooShort, want)
	}
	if l, ok := s.counter.(Limiter); ok && l.MaxTokens() > 0 && n > l.MaxTokens() {
		return fmt.Errorf("%w: %d tokens asked, the model takes at most %d (max_model_len)", ErrTooLong, want, l.MaxTokens())
	}
	if head.text != "" {
		return nil
	}
	shortest := cal.openers[0].cost
	for _, o := range cal.openers {
		shortest = min(shortest, o.cost)
	}
	if n < shortest {
		return fmt.Errorf("%w: %d tokens asked, but the shortest prompt under %s is %d tokens (special tokens or chat template included)",
			ErrTooShort, want, s.counter.Name(), shortest-(n-want))
	}
	return nil
}

// pickOpener picks, at random, an opener no longer than n tokens; one
// exists because checkLength passed.
func pickOpener(rng *draw, ops []piece, n int) piece {
	var fit []piece
	for _, o := range ops {
		if o.cost <= n {
			fit = append(fit, o)
		}
	}
	return fit[rng.intN(len(fit))]
}

// fillWords draws words whose costs add up to exactly budget.
func fillWords(rng *draw, cal *calibration, budget int) []piece {
	out := make([]piece, 0, budget)
	for budget > 0 {
		w := drawWord(rng, cal, budget)
		out = append(out, w)
		budget -= w.cost
	}
	return out
}

// wordsText is head and then the words fillWords would draw, as one text:
// a prompt that is not counted is never corrected, so it needs no pieces.
// Each word is copied as a fixed padWidth bytes (the padding is
// overwritten by the next word or cut off): a memmove call per word was
// most of the cost of a prompt.
func wordsText(rng *draw, cal *calibration, head piece, budget int) string {
	bp := textBufs.Get().(*[]byte)
	defer textBufs.Put(bp)
	b := slices.Grow((*bp)[:0], len(head.text)+padWidth*budget)
	b = append(b, head.text...)
	for budget > 0 {
		i := drawIndex(rng, cal, budget)
		w := &cal.words[i]
		if n := len(b); len(w.text) <= padWidth && cap(b)-n >= padWidth {
			*(*[padWidth]byte)(b[n : n+padWidth]) = cal.padded[i]
			b = b[:n+len(w.text)]
		} else {
			b = append(b, w.text...)
		}
		budget -= w.cost
	}
	*bp = b
	return string(b)
}

// textBufs holds wordsText's buffers between prompts.
var textBufs = sync.Pool{New: func() any { return new([]byte) }}

// padWidth is the size of wordsText's fixed copy; common words with their
// space are shorter.
const padWidth = 16

// drawWord draws a word costing at most budget (budget >= 1).
func drawWord(rng *draw, cal *calibration, budget int) piece {
	return cal.words[drawIndex(rng, cal, budget)]
}

// drawIndex draws the index of a word costing at most budget (budget >=
// 1); words are sorted by cost, and the one-token words always fit.
func drawIndex(rng *draw, cal *calibration, budget int) int {
	if cal.words[len(cal.words)-1].cost <= budget {
		return rng.intN(len(cal.words))
	}
	fit := len(cal.ones)
	for fit < len(cal.words) && cal.words[fit].cost <= budget {
		fit++
	}
	return rng.intN(fit)
}

// correct adjusts pieces by delta tokens: it appends one-token words, or
// drops words from the end and tops up with one-token words. ok is false
// when there is nothing left to drop.
func correct(rng *draw, cal *calibration, pieces []piece, delta int) ([]piece, bool) {
	for delta < 0 {
		if len(pieces) == 0 {
			return pieces, false
		}
		delta += pieces[len(pieces)-1].cost
		pieces = pieces[:len(pieces)-1]
	}
	for ; delta > 0; delta-- {
		pieces = append(pieces, cal.ones[rng.intN(len(cal.ones))])
	}
	return pieces, true
}

func joinPieces(head piece, pieces []piece) string {
	size := len(head.text)
	for _, p := range pieces {
		size += len(p.text)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(head.text)
	for _, p := range pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// draw is one prompt's seeded stream of choices. intN returns exactly what
// rand.Rand's IntN returns over the same PCG (TestDrawIsIntN), so a seed
// builds the prompts it always built; calling the PCG directly spares an
// interface call per word and the Rand and PCG allocated per prompt.
type draw struct{ pcg rand.PCG }

func newDraw(seed1, seed2 uint64) *draw {
	d := new(draw)
	d.pcg.Seed(seed1, seed2)
	return d
}

// intN is rand.Rand.IntN's algorithm (Lemire's multiply, rejecting the
// biased low products) for n > 0.
func (d *draw) intN(n int) int {
	u := uint64(n)
	if u&(u-1) == 0 {
		return int(d.pcg.Uint64() & (u - 1))
	}
	hi, lo := bits.Mul64(d.pcg.Uint64(), u)
	if lo < u {
		thresh := -u % u
		for lo < thresh {
			hi, lo = bits.Mul64(d.pcg.Uint64(), u)
		}
	}
	return int(hi)
}
