package workload

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/tokenize"
)

func sessions(t *testing.T, spec Spec, c tokenize.Counter) Sessions {
	t.Helper()
	w, err := New(spec, env(c, true))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := w.Source(0).(Sessions)
	if !ok {
		t.Fatal("a multi-turn workload's source is not Sessions")
	}
	return s
}

// resume returns the waiting turn, failing the test when there is none.
func resume(t *testing.T, s Sessions) Item {
	t.Helper()
	it, _, ok, err := s.Resume(context.Background(), false)
	if !ok || err != nil {
		t.Fatalf("no next turn (ok %v, err %v)", ok, err)
	}
	return it
}

func TestMultiTurnHistoryGrows(t *testing.T) {
	c := &words{chat: true}
	s := sessions(t, Spec{MultiTurn: 3, PromptTokens: "30", OutputTokens: "10"}, c)
	ctx := context.Background()
	it, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replies := []string{"alpha beta gamma", "delta epsilon"}
	prev := 0
	for turn := 1; turn <= 3; turn++ {
		// Each turn is the whole history: user, answer, user, ..., user.
		if it.Session != 1 || it.Turn != turn || len(it.Messages) != 2*turn-1 || it.MaxTokens != 10 {
			t.Fatalf("turn %d: session %d turn %d, %d messages, max_tokens %d", turn, it.Session, it.Turn, len(it.Messages), it.MaxTokens)
		}
		for i, r := range replies[:turn-1] {
			if m := it.Messages[2*i+1]; m.Role != "assistant" || m.Content != r {
				t.Errorf("turn %d: message %d is %+v, want the actual answer %q", turn, 2*i+1, m, r)
			}
		}
		n, _, _ := c.CountChat(ctx, it.Messages)
		if it.Want != n || it.Tokens != n || n <= prev || !it.Templated {
			t.Errorf("turn %d: requested %d, history counts %d, previous %d", turn, it.Want, n, prev)
		}
		if turn == 1 && n != 30 {
			t.Errorf("first turn %d tokens, want 30", n)
		}
		prev = n
		if turn < 3 {
			s.Done(ctx, it, replies[turn-1], true)
			it = resume(t, s)
		}
	}
	// After the last turn the session is over.
	s.Done(ctx, it, "fin", true)
	if _, _, ok, _ := s.Resume(ctx, true); ok {
		t.Error("a fourth turn was offered")
	}
}

func TestMultiTurnContextCap(t *testing.T) {
	c := &words{chat: true}
	s := sessions(t, Spec{MultiTurn: 50, PromptTokens: "30", OutputTokens: "10", ContextTokens: 200}, c)
	ctx := context.Background()
	it, _ := s.Next(ctx)
	turns := 0
	for {
		turns++
		if it.Want+it.MaxTokens > 200 {
			t.Fatalf("turn %d: %d + %d tokens exceed the context of 200", it.Turn, it.Want, it.MaxTokens)
		}
		s.Done(ctx, it, strings.Repeat("word ", 10), true)
		next, _, ok, _ := s.Resume(ctx, false)
		if !ok {
			break
		}
		it = next
	}
	// 30, then +10 answer +25 per turn with the template: 30 65 100 135 170;
	// the sixth would be 205 + 10.
	if turns != 5 {
		t.Errorf("%d turns fit in 200 tokens, want 5", turns)
	}
	// The server's own context length is the cap when none is given.
	s = sessions(t, Spec{MultiTurn: 50, PromptTokens: "30", OutputTokens: "10"}, &words{chat: true, limit: 100})
	it, _ = s.Next(ctx)
	for {
		if it.Want+it.MaxTokens > 100 {
			t.Fatalf("turn %d exceeds the server's context length", it.Turn)
		}
		s.Done(ctx, it, strings.Repeat("word ", 10), true)
		var ok bool
		if it, _, ok, _ = s.Resume(ctx, false); !ok {
			break
		}
	}
}

func TestMultiTurnFailureEndsSession(t *testing.T) {
	s := sessions(t, Spec{MultiTurn: 5, PromptTokens: "30", OutputTokens: "10"}, &words{chat: true})
	ctx := context.Background()
	it, _ := s.Next(ctx)
	s.Done(ctx, it, "partial answ", false)
	if _, _, ok, _ := s.Resume(ctx, true); ok {
		t.Error("a failed turn's session went on")
	}
	// A new session gets a new number.
	if it2, _ := s.Next(ctx); it2.Session == it.Session || it2.Turn != 1 {
		t.Errorf("new session %d turn %d after session %d", it2.Session, it2.Turn, it.Session)
	}
}

// Think time: an open loop's arrival does not take a session still
// thinking; a closed loop's user waits it out.
func TestMultiTurnThinkTime(t *testing.T) {
	const think = 60 * time.Millisecond
	s := sessions(t, Spec{MultiTurn: 3, PromptTokens: "30", OutputTokens: "10", ThinkTime: think}, &words{chat: true})
	ctx := context.Background()
	it, _ := s.Next(ctx)
	done := time.Now()
	s.Done(ctx, it, "answer", true)
	if _, _, ok, _ := s.Resume(ctx, false); ok {
		t.Error("open loop took a turn before its think time passed")
	}
	next, at, ok, err := s.Resume(ctx, true)
	if !ok || err != nil || next.Turn != 2 {
		t.Fatalf("closed loop: ok %v err %v turn %d", ok, err, next.Turn)
	}
	if waited := time.Since(done); waited < think || at.Sub(done) < think {
		t.Errorf("waited %v, ready at +%v; want at least %v", waited, at.Sub(done), think)
	}
	// Cancelled while waiting: the turn is given up with the context's error.
	s.Done(ctx, next, "answer", true)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, ok, err := s.Resume(cctx, true); !ok || err == nil {
		t.Errorf("cancelled wait: ok %v err %v", ok, err)
	}
}

// Without a chat-template counter, lengths are content tokens: the sum over
// the messages, as a single request's would be.
func TestMultiTurnContentCounts(t *testing.T) {
	tk, _ := tokenize.NewTiktoken("cl100k_base")
	s := sessions(t, Spec{MultiTurn: 2, PromptTokens: "40", OutputTokens: "10"}, tk)
	ctx := context.Background()
	it, _ := s.Next(ctx)
	if it.Want != 40 || it.Templated {
		t.Fatalf("first turn %d tokens (templated %v), want 40 content tokens", it.Want, it.Templated)
	}
	s.Done(ctx, it, " one two three", true)
	it = resume(t, s)
	want := 0
	for _, m := range it.Messages {
		n, _ := tk.Count(ctx, m.Content)
		want += n
	}
	if it.Want != want {
		t.Errorf("second turn %d tokens, content adds up to %d", it.Want, want)
	}
}

// ShareGPT conversations replay as sessions: system prompt first, the
// human turns in order, each with its recorded answer's length as
// max_tokens, the server's answers as history.
func TestMultiTurnReplaysShareGPT(t *testing.T) {
	s := sessions(t, Spec{Dataset: "testdata/sharegpt_sample.json", MultiTurn: 10}, &words{chat: true})
	d, _ := LoadDataset("testdata/sharegpt_sample.json", "")
	ctx := context.Background()
	for _, conv := range d.Conversations {
		it, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k, tr := range conv.Turns {
			msgs := it.Messages
			if conv.System != "" && (msgs[0].Role != "system" || msgs[0].Content != conv.System) {
				t.Errorf("conversation %s: first message %+v, want the system prompt", conv.ID, msgs[0])
			}
			if last := msgs[len(msgs)-1]; last.Content != tr.Prompt || it.Turn != k+1 {
				t.Errorf("conversation %s turn %d: sent %q", conv.ID, it.Turn, last.Content)
			}
			if tr.Reply != "" && it.MaxTokens != wordCount(tr.Reply) {
				t.Errorf("conversation %s turn %d: max_tokens %d, recorded answer %d tokens", conv.ID, k+1, it.MaxTokens, wordCount(tr.Reply))
			}
			s.Done(ctx, it, "server answer", true)
			next, _, ok, _ := s.Resume(ctx, false)
			if ok != (k+1 < len(conv.Turns)) {
				t.Fatalf("conversation %s after turn %d: next turn %v", conv.ID, k+1, ok)
			}
			it = next
		}
	}
	if _, err := New(Spec{Dataset: "testdata/prompts.jsonl", MultiTurn: 3}, env(&words{chat: true}, true)); err == nil ||
		!strings.Contains(err.Error(), "cannot be replayed") {
		t.Errorf("JSONL messages as sessions: %v", err)
	}
	if _, err := New(Spec{MultiTurn: 3}, env(&words{}, false)); err == nil || !strings.Contains(err.Error(), "chat API") {
		t.Errorf("sessions on a completions API: %v", err)
	}
}

// Closed loop of users sharing the source, as bench drives it: a user
// whose session goes on takes its next turn before anyone starts a new
// session, so at most users sessions are ever open.
func TestMultiTurnClosedLoop(t *testing.T) {
	const users, perUser = 4, 25
	s := sessions(t, Spec{MultiTurn: 3, PromptTokens: "20", OutputTokens: "5"}, &words{chat: true})
	ctx := context.Background()
	var mu sync.Mutex
	open, peak, turns := map[int]int{}, 0, 0
	var wg sync.WaitGroup
	for range users {
		wg.Go(func() {
			for range perUser {
				it, _, ok, err := s.Resume(ctx, true)
				if !ok {
					it, err = s.Next(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if open[it.Session] != it.Turn-1 {
					t.Errorf("session %d: turn %d after turn %d", it.Session, it.Turn, open[it.Session])
				}
				open[it.Session] = it.Turn
				live := 0
				for _, n := range open {
					if n < 3 {
						live++
					}
				}
				peak, turns = max(peak, live), turns+1
				mu.Unlock()
				s.Done(ctx, it, "ok then", true)
			}
		})
	}
	wg.Wait()
	if peak > users || turns != users*perUser {
		t.Errorf("peak %d open sessions for %d users, %d turns", peak, users, turns)
	}
}
