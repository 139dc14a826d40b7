package workload

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/tokenize"
)

// Sessions is a Source of multi-turn conversations. Next starts a new
// session and returns its first turn, so first turns can be prepared ahead
// like any request. A later turn carries the previous turn's actual answer,
// so it exists only once that answer is in: the caller hands every finished
// turn to Done, and before starting a new session asks Resume for a session
// that is waiting to go on.
type Sessions interface {
	Source
	// Done reports a finished turn: its answer text, and whether the
	// request succeeded. A failed turn ends its session.
	Done(ctx context.Context, it Item, answer string, ok bool)
	// Resume returns the next turn of a session whose answer is in and
	// whose think time has passed; at is when it became ready. Without
	// wait it returns only a turn that is ready now (an open loop's
	// arrival); with wait it waits for the earliest session still thinking
	// (a closed loop's user, who keeps a session rather than start one).
	// ok is false when no session is waiting. err is a turn that could not
	// be built (its session is over).
	Resume(ctx context.Context, wait bool) (it Item, at time.Time, ok bool, err error)
}

// script is what a session's user says.
type script interface {
	// system is the session's system prompt ("" for none).
	system() string
	// say returns the user's k-th message (from 0) and its max_tokens;
	// ok is false when the user has nothing more to say.
	say(ctx context.Context, k int) (text string, out int, ok bool, err error)
}

// MultiTurn runs multi-turn sessions. Each turn sends the whole history —
// the session's user messages and the server's actual answers — and a new
// user message, so context use grows as in a long conversation. A session
// ends after Turns turns, when its next turn would not fit in Context
// tokens (prompt + max_tokens) or MaxPrompt, or when a turn fails. Safe for concurrent
// use.
type MultiTurn struct {
	Turns   int           // turns per session at most
	Think   time.Duration // pause between an answer and the next turn
	Context int           // prompt + max_tokens cap per turn (0: none)
	// MaxPrompt ends a session before a turn whose prompt would be longer
	// (0: no limit).
	MaxPrompt int

	size  *sizer
	start func() script // a new session's user
	tries int           // sessions to try for a first turn that fits
	ids   int

	mu      sync.Mutex
	waiting waitQueue
}

// conversation is a session in progress. Only the goroutine holding its
// current turn touches it.
type conversation struct {
	id, turn int
	msgs     []tokenize.Message
	content  int // content tokens so far, when the template cannot be counted
	script   script
}

// Next starts a session and returns its first turn.
func (m *MultiTurn) Next(ctx context.Context) (Item, error) {
	for range max(m.tries, 1) {
		m.mu.Lock()
		m.ids++
		c := &conversation{id: m.ids, script: m.start()}
		m.mu.Unlock()
		if sys := c.script.system(); sys != "" {
			c.msgs = append(c.msgs, tokenize.Message{Role: "system", Content: sys})
			n, err := m.size.content(ctx, sys)
			if err != nil {
				return Item{}, err
			}
			c.content = n
		}
		it, ok, err := m.turn(ctx, c)
		if err != nil || ok {
			return it, err
		}
	}
	return Item{}, fmt.Errorf("multi-turn: %w", errNoFit)
}

// turn builds c's next turn; ok is false when the session is over.
func (m *MultiTurn) turn(ctx context.Context, c *conversation) (Item, bool, error) {
	if err := m.size.init(ctx); err != nil || c.turn >= m.Turns {
		return Item{}, false, err
	}
	text, out, ok, err := c.script.say(ctx, c.turn)
	if err != nil || !ok {
		return Item{}, false, err
	}
	msgs := append(c.msgs, tokenize.Message{Role: "user", Content: text})
	var n int
	if m.size.isTemplated() {
		n, err = m.size.count(ctx, msgs)
	} else {
		n, err = m.size.content(ctx, text)
		n += c.content
	}
	if err != nil {
		return Item{}, false, fmt.Errorf("session %d, turn %d: %w", c.id, c.turn+1, err)
	}
	if (m.Context > 0 && n+out > m.Context) || (m.MaxPrompt > 0 && n > m.MaxPrompt) {
		return Item{}, false, nil
	}
	c.msgs, c.content = msgs, n
	c.turn++
	return Item{Messages: msgs[:len(msgs):len(msgs)], Want: n, Tokens: n, Source: m.size.counter.Source(),
		Templated: m.size.isTemplated(), MaxTokens: out, Session: c.id, Turn: c.turn, conv: c}, true, nil
}

// Done appends the answer to the session and queues its next turn.
func (m *MultiTurn) Done(ctx context.Context, it Item, answer string, ok bool) {
	c := it.conv
	if c == nil || !ok {
		return
	}
	w := &waiter{}
	c.msgs = append(c.msgs, tokenize.Message{Role: "assistant", Content: answer})
	if !m.size.isTemplated() {
		n, err := m.size.content(ctx, answer)
		c.content += n
		w.err = err
	}
	if w.err == nil {
		var more bool
		if w.item, more, w.err = m.turn(ctx, c); w.err == nil && !more {
			return
		}
	}
	w.ready = time.Now().Add(m.Think)
	m.mu.Lock()
	heap.Push(&m.waiting, w)
	m.mu.Unlock()
}

// Resume returns a waiting session's next turn (see Sessions).
func (m *MultiTurn) Resume(ctx context.Context, wait bool) (Item, time.Time, bool, error) {
	m.mu.Lock()
	if len(m.waiting) == 0 || (!wait && m.waiting[0].ready.After(time.Now())) {
		m.mu.Unlock()
		return Item{}, time.Time{}, false, nil
	}
	w := heap.Pop(&m.waiting).(*waiter)
	m.mu.Unlock()
	if d := time.Until(w.ready); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return Item{}, w.ready, true, ctx.Err()
		}
	}
	return w.item, w.ready, true, w.err
}

// waiter is a session's next turn, ready at ready.
type waiter struct {
	item  Item
	err   error
	ready time.Time
}

// waitQueue is a min-heap of waiters by ready time.
type waitQueue []*waiter

func (q waitQueue) Len() int           { return len(q) }
func (q waitQueue) Less(i, j int) bool { return q[i].ready.Before(q[j].ready) }
func (q waitQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *waitQueue) Push(x any)        { *q = append(*q, x.(*waiter)) }
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return w
}

// synthScript is a synthetic user: messages of drawn lengths, synthesised
// as a single-message chat of that length would be.
type synthScript struct {
	synth          *tokenize.Synth
	prompt, output LengthDist
	mu             *sync.Mutex
	rng            *rand.Rand
}

func (s synthScript) system() string { return "" }

func (s synthScript) say(ctx context.Context, _ int) (string, int, bool, error) {
	s.mu.Lock()
	n, out := s.prompt.Draw(s.rng), s.output.Draw(s.rng)
	s.mu.Unlock()
	p, err := s.synth.Chat(ctx, n)
	if err != nil && p.Text == "" {
		return "", 0, false, err
	}
	return p.Text, out, true, nil
}

// convScript replays a dataset conversation's user turns; the answers
// are the server's own.
type convScript struct {
	c      *Conversation
	counts *counts
	output LengthDist
	mu     *sync.Mutex
	rng    *rand.Rand
}

func (s convScript) system() string { return s.c.System }

func (s convScript) say(ctx context.Context, k int) (string, int, bool, error) {
	if k >= len(s.c.Turns) {
		return "", 0, false, nil
	}
	t := &s.c.Turns[k]
	_, reply, err := s.counts.of(ctx, t)
	if err != nil {
		return "", 0, false, err
	}
	s.mu.Lock()
	out := outputFor(t, reply, s.output, s.rng)
	s.mu.Unlock()
	return t.Prompt, out, true, nil
}
