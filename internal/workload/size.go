package workload

import (
	"context"
	"fmt"
	"sync"

	"github.com/servebench/servebench/internal/tokenize"
)

// sizer counts a request's prompt the way tokenize.Synth sizes one, so that
// every source reports lengths in the same terms: for a completions API the
// text's count; for a chat API the whole templated request when the counter
// can apply the chat template (vLLM's /tokenize), else the messages'
// content alone (the server's usage then tells the truth).
type sizer struct {
	counter tokenize.Counter
	chat    bool

	mu        sync.Mutex
	measured  bool
	templated bool
	base      int // what an empty text counts (special tokens such as a BOS)
	overhead  int // a lone user message's count less its text's count
}

func newSizer(c tokenize.Counter, chat bool) *sizer { return &sizer{counter: c, chat: chat} }

// probe is a one-token word nearly everywhere, used to measure overheads.
const probe = "The"

// init measures, once, whether chat requests can be counted whole and what
// the template and special tokens add. A failure is not kept: the next
// call (a later load point's, say) measures again.
func (z *sizer) init(ctx context.Context) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.measured {
		return nil
	}
	word, err := z.counter.Count(ctx, probe)
	if err != nil {
		return fmt.Errorf("count with %s: %w", z.counter.Name(), err)
	}
	z.base = word - 1
	if n, err := z.counter.Count(ctx, ""); err == nil {
		z.base = n // some servers refuse empty input; the estimate stands then
	}
	z.overhead = -z.base
	if cc, ok := z.counter.(tokenize.ChatCounter); ok && z.chat {
		n, ok, err := cc.CountChat(ctx, []tokenize.Message{{Role: "user", Content: probe}})
		if err != nil {
			return fmt.Errorf("count chat messages with %s: %w", z.counter.Name(), err)
		}
		if ok {
			z.templated, z.overhead = true, n-word
		}
	}
	if !z.chat {
		z.overhead = 0
	}
	z.measured = true
	return nil
}

// count returns the length of a request made of msgs (for a completions API,
// one message whose content is the prompt).
func (z *sizer) count(ctx context.Context, msgs []tokenize.Message) (int, error) {
	if err := z.init(ctx); err != nil {
		return 0, err
	}
	if z.templated {
		n, _, err := z.counter.(tokenize.ChatCounter).CountChat(ctx, msgs)
		if err != nil {
			return 0, fmt.Errorf("count chat messages with %s: %w", z.counter.Name(), err)
		}
		return n, nil
	}
	total := 0
	for _, m := range msgs {
		n, err := z.content(ctx, m.Content)
		if err != nil {
			return 0, err
		}
		total += n
	}
	if !z.chat {
		total += z.base // a completions prompt's count includes its special tokens
	}
	return total, nil
}

// content returns the tokens of text alone, special tokens excluded: what
// a recorded answer's length is measured in.
func (z *sizer) content(ctx context.Context, text string) (int, error) {
	if err := z.init(ctx); err != nil {
		return 0, err
	}
	n, err := z.counter.Count(ctx, text)
	if err != nil {
		return 0, fmt.Errorf("count with %s: %w", z.counter.Name(), err)
	}
	return max(n-z.base, 0), nil
}

// textTarget converts a request length into the length of a prompt text
// (as Synth counts it) that makes a one-message request that long.
func (z *sizer) textTarget(ctx context.Context, n int) (int, error) {
	if err := z.init(ctx); err != nil {
		return 0, err
	}
	return n - z.overhead, nil
}

// isTemplated reports whether counts include the chat template (known
// once init succeeded).
func (z *sizer) isTemplated() bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.templated
}

// user is a one-message chat, or a completions prompt.
func user(text string) []tokenize.Message {
	return []tokenize.Message{{Role: "user", Content: text}}
}
