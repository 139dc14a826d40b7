package tokenize

import (
	"context"
	"fmt"
)

// Block is one block of a prompt whose text is fixed by its ID: every
// prompt that has a block of that ID at the same position carries the same
// text there, so a server's prefix cache sees the reuse (a trace's
// hash_ids). Tokens is the block's length.
type Block struct {
	ID     uint64
	Tokens int
}

// blockStream keys the seeded stream of a block's words, apart from the
// streams of ordinary prompts.
const blockStream = 0x626c6f636b

// Blocks returns a prompt made of blocks followed by tail tokens of words of
// its own (tail may be 0). A block's text depends only on the Synth's seed,
// its ID, its length and whether it starts the prompt (the first block opens
// with an opener word, whose cost is part of its Tokens). Words are whole
// pre-tokens with their leading space, so a block tokenizes the same
// wherever it stands and the counts add up (TestBlocksShareTokens checks
// the token ids); a shorter block of an ID (a partial last block) is the
// longer one's text but for its last few words.
//
// Like Prompt, Blocks counts a sample of its prompts; a miss is corrected
// in the last block or the tail alone, so that the blocks before it keep
// their shared text. The error is ErrInexact, with a usable prompt, when
// corrections ran out.
func (s *Synth) Blocks(ctx context.Context, blocks []Block, tail int) (Prompt, error) {
	n := tail
	for _, b := range blocks {
		if b.Tokens <= 0 {
			return Prompt{}, fmt.Errorf("%w: a block of %d tokens", ErrTooShort, b.Tokens)
		}
		n += b.Tokens
	}
	if tail < 0 || n <= 0 {
		return Prompt{}, fmt.Errorf("%w: %d tokens asked; ask for at least 1", ErrTooShort, n)
	}
	cal, err := s.calibration(ctx, false)
	if err != nil {
		return Prompt{}, err
	}
	if err := s.checkLength(cal, piece{text: "-"}, n, n); err != nil {
		return Prompt{}, err
	}
	pieces := make([]piece, 0, n)
	for i, b := range blocks {
		ps, err := blockPieces(cal, s.blockSeed, b, i == 0)
		if err != nil {
			return Prompt{}, err
		}
		pieces = append(pieces, ps...)
	}
	if len(blocks) == 0 {
		return s.build(ctx, cal, piece{}, n, n)
	}
	if tail > 0 {
		s.mu.Lock()
		rng := newDraw(s.rng.Uint64(), s.rng.Uint64())
		s.mu.Unlock()
		pieces = append(pieces, fillWords(rng, cal, tail)...)
	}
	return s.countBlocks(ctx, cal, pieces, blocks, tail, n)
}

// blockPieces are the words of block b: an opener first when it starts the
// prompt, then words drawn from the stream of its ID.
func blockPieces(cal *calibration, seed uint64, b Block, first bool) ([]piece, error) {
	rng := newDraw(seed^blockStream, b.ID)
	budget := b.Tokens
	var out []piece
	if first {
		o, err := blockOpener(rng, cal, budget)
		if err != nil {
			return nil, err
		}
		out, budget = append(out, o), budget-o.cost
	}
	return append(out, fillWords(rng, cal, budget)...), nil
}

// blockOpener picks an opener that fits a first block of budget tokens.
func blockOpener(rng *draw, cal *calibration, budget int) (piece, error) {
	for _, o := range cal.openers {
		if o.cost <= budget {
			return pickOpener(rng, cal.openers, budget), nil
		}
	}
	return piece{}, fmt.Errorf("%w: a first block of %d tokens, but the shortest prompt is longer", ErrTooShort, budget)
}

// countBlocks returns the prompt of pieces, counted when it is in the
// verification sample and corrected at its end (the last block, or the
// tail) when the count is off.
func (s *Synth) countBlocks(ctx context.Context, cal *calibration, pieces []piece, blocks []Block, tail, n int) (Prompt, error) {
	p := Prompt{Tokens: n, Source: s.counter.Source(), Counter: s.counter.Name()}
	if !s.mustCount() {
		s.prompts.Add(1)
		s.unverified.Add(1)
		p.Text = joinPieces(piece{}, pieces)
		return p, nil
	}
	// Corrections touch only the end: the pieces after the last full
	// block that another prompt may share.
	keep := len(pieces) - tailPieces(pieces, blocks, tail)
	count := s.countFunc(cal.count, nil)
	got, err := count(ctx, joinPieces(piece{}, pieces))
	if err != nil {
		return Prompt{}, fmt.Errorf("synthesise %d-token prompt: %w", n, err)
	}
	if got == n {
		s.firstTry.Add(1)
	} else {
		s.missed.Store(true)
	}
	rng := newDraw(s.blockSeed^blockStream, uint64(n))
	for fix := 0; got != n && fix < maxFixes; fix++ {
		end, ok := correct(rng, cal, pieces[keep:], n-got)
		if !ok {
			break
		}
		pieces = append(pieces[:keep:keep], end...)
		if got, err = count(ctx, joinPieces(piece{}, pieces)); err != nil {
			return Prompt{}, fmt.Errorf("synthesise %d-token prompt: %w", n, err)
		}
	}
	s.prompts.Add(1)
	p.Text, p.Tokens = joinPieces(piece{}, pieces), got
	if got != n {
		s.inexact.Add(1)
		return p, fmt.Errorf("%w: asked for %d tokens, got %d after %d corrections", ErrInexact, n, got, maxFixes)
	}
	return p, nil
}

// tailPieces is how many of pieces belong to the tail, or, without one, to
// the last block: the part a correction may change.
func tailPieces(pieces []piece, blocks []Block, tail int) int {
	budget := tail
	if tail == 0 && len(blocks) > 0 {
		budget = blocks[len(blocks)-1].Tokens
	}
	k := 0
	for i := len(pieces) - 1; i >= 0 && budget > 0; i-- {
		budget -= pieces[i].cost
		k++
	}
	return k
}
