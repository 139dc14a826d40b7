package tokenize

import (
	"context"
	"math/rand/v2"
	"testing"
)

// Prompts built without a count are as exact as counted ones: every one
// of 1,500 prompts of random lengths, recounted by a fresh tokenizer, has
// the length asked for, and most were not counted when built.
func TestSynthUncountedPromptsExact(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		s := NewSynth(newTiktoken(t, enc), 5)
		check := newTiktoken(t, enc)
		rng := rand.New(rand.NewPCG(1, 2))
		const prompts = 1500
		for i := range prompts {
			n := 1 + rng.IntN(700)
			if i%2 == 1 {
				n = 1 + rng.IntN(8) // short prompts: the opener weighs most
			}
			p, err := s.Prompt(ctx, n)
			if err != nil {
				t.Fatalf("%s prompt %d (%d tokens): %v", enc, i, n, err)
			}
			if got, _ := check.Count(ctx, p.Text); got != n || p.Tokens != n {
				t.Fatalf("%s prompt %d: asked %d, reported %d, recounted %d", enc, i, n, p.Tokens, got)
			}
		}
		st := s.Stats()
		const counted = 16 + 1024/32 // the first 16, then 32, 64, ..., 1024; the next, 2048, is past 1,500
		if st.Unverified != prompts-counted || st.Counts-st.Calibration != counted || st.FirstTry != counted {
			t.Errorf("%s: %+v: want %d prompts counted, the rest by construction", enc, st, counted)
		}
	}
}

func TestSampled(t *testing.T) {
	var got []int64
	for k := int64(1); k <= 5000; k++ {
		if sampled(k) {
			got = append(got, k)
		}
	}
	if len(got) != 16+32+3 || got[15] != 16 || got[16] != 32 || got[47] != 1024 || got[48] != 2048 || got[50] != 4096 {
		t.Errorf("sampled prompts %v: want 1..16, every 32nd to 1,024, then every 1,024th", got)
	}
}

// lengthy adds a token per 8,000 bytes of text: calibration's short texts
// add up, long prompts do not.
type lengthy struct{ Tiktoken }

func (l *lengthy) Count(ctx context.Context, text string) (int, error) {
	n, err := l.Tiktoken.Count(ctx, text)
	return n + len(text)/8000, err
}

// A sampled prompt whose count is off turns counting on for every prompt
// after it: prompts past the first verifyFirst are counted and corrected
// too.
func TestSynthMissCountsEveryPrompt(t *testing.T) {
	ctx := context.Background()
	c := &lengthy{*newTiktoken(t, "cl100k_base")}
	s := NewSynth(c, 9)
	const prompts = 3 * verifyFirst
	for i := range prompts {
		p, err := s.Prompt(ctx, 3000)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := c.Count(ctx, p.Text); n != 3000 {
			t.Fatalf("prompt %d: %d tokens", i, n)
		}
	}
	if st := s.Stats(); st.Unverified != 0 || st.FirstTry == st.Prompts {
		t.Errorf("%+v: want a miss among the first prompts, then every prompt counted", st)
	}
}

// The sample changes which prompts are counted, never their text: two
// Synths with the same seed give the same prompts whether one of them has
// missed (and counts everything) or not.
func TestSynthSampleKeepsText(t *testing.T) {
	ctx := context.Background()
	tk := newTiktoken(t, "cl100k_base")
	a, b := NewSynth(tk, 21), NewSynth(tk, 21)
	b.missed.Store(true)
	for i := range 100 {
		pa, _ := a.Prompt(ctx, 300)
		pb, _ := b.Prompt(ctx, 300)
		if pa != pb {
			t.Fatalf("prompt %d differs between sampled and fully counted", i)
		}
	}
	if a.Stats().Unverified == 0 || b.Stats().Unverified != 0 {
		t.Errorf("sampled %+v, counted %+v", a.Stats(), b.Stats())
	}
}
