package tokenize

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

var exactLengths = []int{1, 2, 7, 128, 512, 4096}

func newTiktoken(t testing.TB, enc string) *Tiktoken {
	t.Helper()
	tk, err := NewTiktoken(enc)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestSynthExactTiktoken(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		tk := newTiktoken(t, enc)
		s := NewSynth(tk, 1)
		for _, n := range exactLengths {
			p, err := s.Prompt(ctx, n)
			if err != nil {
				t.Fatalf("%s n=%d: %v", enc, n, err)
			}
			// Round trip: a fresh counter agrees with what Synth reports.
			got, _ := newTiktoken(t, enc).Count(ctx, p.Text)
			if p.Tokens != n || got != n || p.Text == "" {
				t.Errorf("%s n=%d: reported %d, recounted %d, text %q", enc, n, p.Tokens, got, clip(p.Text, 40))
			}
			if p.Source != record.SourceLocal || p.Counter != "tiktoken:"+enc {
				t.Errorf("%s: source %q counter %q", enc, p.Source, p.Counter)
			}
		}
		if st := s.Stats(); st.FirstTry != st.Prompts || st.Inexact != 0 {
			t.Errorf("%s: %+v: want every prompt exact on its first count", enc, st)
		}
	}
}

func TestSynthExactServer(t *testing.T) {
	ctx := context.Background()
	engine := &fakeEngine{shape: ShapeSGLang, maxLen: 8192}
	srv := engine.start(t)
	s := NewSynth(&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeSGLang, AddSpecial: true, MaxModelLen: 8192}, 7)
	for _, n := range exactLengths {
		p, err := s.Prompt(ctx, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if got := engine.count(p.Text, true); p.Tokens != n || got != n {
			t.Errorf("n=%d: reported %d, engine counts %d", n, p.Tokens, got)
		}
		if p.Source != record.SourceServer {
			t.Errorf("source %q", p.Source)
		}
	}
	// Round trips: calibration once, then one count per prompt.
	st := s.Stats()
	t.Logf("%+v", st)
	if st.Counts-st.Calibration != int64(len(exactLengths)) || st.Counts != engine.calls.Load() {
		t.Errorf("%+v, engine saw %d calls: want one call per prompt after calibration", st, engine.calls.Load())
	}
	if st.Calibration > 40 {
		t.Errorf("calibration took %d calls", st.Calibration)
	}
	before := engine.calls.Load()
	for range 200 {
		if _, err := s.Prompt(ctx, 64); err != nil {
			t.Fatal(err)
		}
	}
	// Prompts 7 to 206: the rest of the first verifyFirst, then one in
	// verifyEvery (32, 64, ..., 192) are counted.
	if calls := engine.calls.Load() - before; calls != verifyFirst-6+6 {
		t.Errorf("200 prompts took %d calls, want %d", calls, verifyFirst)
	}
}

func TestSynthServerMultiTokenWords(t *testing.T) {
	// Words of seven letters or more cost two tokens: calibration must find
	// the one-token words in groups and prompts stay exact.
	ctx := context.Background()
	engine := &fakeEngine{shape: ShapeVLLM, bos: true, cost: func(w string) int { return 1 + len(w)/7 }}
	srv := engine.start(t)
	s := NewSynth(&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeVLLM, AddSpecial: true}, 3)
	for _, n := range []int{2, 100, 1000} {
		p, err := s.Prompt(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := engine.count(p.Text, true); got != n {
			t.Errorf("n=%d: engine counts %d", n, got)
		}
	}
	st := s.Stats()
	t.Logf("%+v", st)
	if st.Calibration > int64(maxCalibrationCounts+len(openers)+1) || st.FirstTry != st.Prompts {
		t.Errorf("%+v", st)
	}
}

func TestSynthImpossible(t *testing.T) {
	ctx := context.Background()
	srv := (&fakeEngine{shape: ShapeVLLM, bos: true, maxLen: 4096}).start(t)
	s := NewSynth(&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeVLLM, AddSpecial: true, MaxModelLen: 4096}, 1)
	cases := []struct {
		n    int
		want error
		msg  string
	}{
		{4097, ErrTooLong, "at most 4096"},
		{32768, ErrTooLong, "max_model_len"},
		{1, ErrTooShort, "shortest prompt"}, // the BOS takes the only token
		{0, ErrTooShort, "at least 1"},
		{-5, ErrTooShort, "at least 1"},
	}
	for _, c := range cases {
		_, err := s.Prompt(ctx, c.n)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("n=%d: got %v, want %v mentioning %q", c.n, err, c.want, c.msg)
		}
	}
	if p, err := s.Prompt(ctx, 4096); err != nil || p.Tokens != 4096 {
		t.Errorf("n=max_model_len: got %d, %v", p.Tokens, err)
	}
}

func TestSynthChat(t *testing.T) {
	ctx := context.Background()
	// vLLM counts the templated request: N is the whole prompt.
	vllm := &fakeEngine{shape: ShapeVLLM, bos: true, template: 9}
	srv := vllm.start(t)
	s := NewSynth(&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeVLLM, AddSpecial: true}, 5)
	for _, n := range []int{10, 128, 512} {
		p, err := s.Chat(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := 9 + vllm.count(p.Text, false); !p.Templated || p.Tokens != n || got != n {
			t.Errorf("vllm n=%d: templated %v, reported %d, engine counts %d", n, p.Templated, p.Tokens, got)
		}
	}
	if _, err := s.Chat(ctx, 9); !errors.Is(err, ErrTooShort) {
		t.Errorf("chat shorter than the template: got %v", err)
	}
	// SGLang cannot count messages: N content tokens, said so.
	sgl := &fakeEngine{shape: ShapeSGLang, bos: true}
	srv2 := sgl.start(t)
	s2 := NewSynth(&Server{Target: testTarget(t, srv2.URL, ""), Shape: ShapeSGLang, AddSpecial: true}, 5)
	for _, n := range []int{1, 128} {
		p, err := s2.Chat(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := sgl.count(p.Text, false); p.Templated || p.Tokens != n || got != n {
			t.Errorf("sglang n=%d: templated %v, reported %d, content %d", n, p.Templated, p.Tokens, got)
		}
	}
	// A local counter: content tokens too.
	p, err := NewSynth(newTiktoken(t, "o200k_base"), 1).Chat(ctx, 50)
	if err != nil || p.Templated || p.Tokens != 50 {
		t.Errorf("local chat: %+v, %v", p, err)
	}
}

func TestSynthPrefix(t *testing.T) {
	ctx := context.Background()
	tk := newTiktoken(t, "cl100k_base")
	s := NewSynth(tk, 9)
	pre, err := s.Prefix(ctx, 100)
	if err != nil || pre.PrefixTokens != 100 {
		t.Fatalf("prefix: %+v, %v", pre.PrefixTokens, err)
	}
	a, errA := s.WithPrefix(ctx, pre, 300)
	b, errB := s.WithPrefix(ctx, pre, 300)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	for _, p := range []Prompt{a, b} {
		n, _ := tk.Count(ctx, p.Text)
		if n != 300 || p.Tokens != 300 || p.PrefixTokens != 100 || !strings.HasPrefix(p.Text, pre.Text) {
			t.Errorf("got %d tokens (reported %d), prefix %d", n, p.Tokens, p.PrefixTokens)
		}
	}
	if a.Text == b.Text {
		t.Error("two prompts with a shared prefix are identical")
	}
	if _, err := s.WithPrefix(ctx, pre, 100); !errors.Is(err, ErrTooShort) {
		t.Errorf("n equal to the prefix: got %v", err)
	}
	if _, err := s.WithPrefix(ctx, Prompt{}, 100); err == nil {
		t.Error("empty prefix: got no error")
	}
}

func TestSynthVariedAndReproducible(t *testing.T) {
	ctx := context.Background()
	tk := newTiktoken(t, "o200k_base")
	a, b := NewSynth(tk, 42), NewSynth(tk, 42)
	starts := map[string]bool{}
	for i := range 100 {
		pa, _ := a.Prompt(ctx, 512)
		pb, _ := b.Prompt(ctx, 512)
		if pa.Text != pb.Text {
			t.Fatalf("prompt %d differs between two Synths with the same seed", i)
		}
		// No two prompts share their first 16 words (a prefix-cache block).
		start := strings.Join(strings.Fields(pa.Text)[:16], " ")
		if starts[start] {
			t.Fatalf("prompt %d repeats an earlier prompt's start %q", i, start)
		}
		starts[start] = true
	}
	pc, _ := NewSynth(tk, 43).Prompt(ctx, 512)
	pa, _ := NewSynth(tk, 42).Prompt(ctx, 512)
	if pc.Text == pa.Text {
		t.Error("different seeds gave the same prompt")
	}
}

// offByOne is a counter whose counts do not add up word by word: every
// " of the" pair is one token, so first counts can miss.
type offByOne struct{ Tiktoken }

func (o *offByOne) Count(ctx context.Context, text string) (int, error) {
	n, err := o.Tiktoken.Count(ctx, text)
	return n - strings.Count(text, " of the"), err
}

func TestSynthCorrectsMisses(t *testing.T) {
	ctx := context.Background()
	c := &offByOne{*newTiktoken(t, "cl100k_base")}
	s := NewSynth(c, 2)
	for range 50 {
		p, err := s.Prompt(ctx, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := c.Count(ctx, p.Text); n != 2000 {
			t.Fatalf("got %d tokens", n)
		}
	}
	st := s.Stats()
	t.Logf("%+v", st)
	if st.FirstTry == st.Prompts || st.Inexact != 0 {
		t.Errorf("%+v: want some prompts corrected, none inexact", st)
	}
}

// wobbly counts differently every time: no prompt can be made exact.
type wobbly struct {
	Tiktoken
	mu sync.Mutex
	i  int
}

func (w *wobbly) Count(ctx context.Context, text string) (int, error) {
	n, err := w.Tiktoken.Count(ctx, text)
	if !strings.Contains(text, " ") || len(text) < 300 {
		return n, err // calibration sees a sane tokenizer
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.i++
	return n + 1 + w.i%3, err
}

func TestSynthInexact(t *testing.T) {
	c := &wobbly{Tiktoken: *newTiktoken(t, "cl100k_base")}
	p, err := NewSynth(c, 1).Prompt(context.Background(), 500)
	if !errors.Is(err, ErrInexact) || p.Text == "" || p.Tokens == 500 {
		t.Errorf("got %d tokens, %v; want a usable prompt and ErrInexact", p.Tokens, err)
	}
}

// perChar counts one token per byte: no word is a single token.
type perChar struct{}

func (perChar) Count(_ context.Context, text string) (int, error) { return len(text), nil }
func (perChar) Name() string                                      { return "perchar" }
func (perChar) Source() string                                    { return record.SourceLocal }

func TestSynthCalibrationFailure(t *testing.T) {
	_, err := NewSynth(perChar{}, 1).Prompt(context.Background(), 10)
	if err == nil || !strings.Contains(err.Error(), "one token each") {
		t.Errorf("got %v", err)
	}
	srv := (&fakeEngine{shape: ShapeVLLM}).start(t)
	srv.Close()
	if _, err := NewSynth(&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeVLLM}, 1).Prompt(context.Background(), 10); err == nil {
		t.Error("unreachable server: got no error")
	}
}

func TestSynthConcurrent(t *testing.T) {
	ctx := context.Background()
	srv := (&fakeEngine{shape: ShapeVLLM, template: 4}).start(t)
	s := NewSynth(&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeVLLM}, 11)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				var err error
				if (g+i)%2 == 0 {
					_, err = s.Prompt(ctx, 16+i)
				} else {
					_, err = s.Chat(ctx, 16+i)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := s.Stats(); st.Prompts != 64 || st.Inexact != 0 {
		t.Errorf("%+v", st)
	}
}

func TestSynthLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("32k-token prompt")
	}
	tk := newTiktoken(t, "o200k_base")
	p, err := NewSynth(tk, 1).Prompt(context.Background(), 32768)
	if err != nil || p.Tokens != 32768 {
		t.Fatalf("got %d, %v", p.Tokens, err)
	}
}

// TestDrawIsIntN: the word draw is rand.Rand's IntN over the same PCG,
// so a seed builds the same prompts as before the draw was inlined.
func TestDrawIsIntN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 1000, 4999, 1 << 20, 1<<62 + 1} {
		d := newDraw(42, uint64(n))
		r := rand.New(rand.NewPCG(42, uint64(n)))
		for i := range 2000 {
			if got, want := d.intN(n), r.IntN(n); got != want {
				t.Fatalf("n=%d draw %d: %d, rand.IntN %d", n, i, got, want)
			}
		}
	}
}
