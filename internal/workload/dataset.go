package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/servebench/servebench/internal/tokenize"
)

// Dataset formats.
const (
	FormatJSONL    = "jsonl"    // one {"prompt": ...} or {"messages": [...]} per line
	FormatShareGPT = "sharegpt" // a JSON array of {"conversations": [{"from", "value"}]}
)

// Dataset orders.
const (
	OrderSequential = "sequential" // file order, from the start for every load point
	OrderShuffle    = "shuffle"    // a seeded permutation, a new one each pass
)

// Dataset is a prompt file, parsed.
type Dataset struct {
	Path          string
	Format        string
	Conversations []Conversation
}

// Conversation is one dataset entry: what a user says, turn by turn. A
// JSONL line is a conversation of one turn.
type Conversation struct {
	Line   int    // where the entry starts in its file
	ID     string // the entry's id, when it has one
	System string // system prompt (ShareGPT "system" turn), sent in multi-turn sessions
	Turns  []Turn
}

// Turn is one user message and what is known about its answer.
type Turn struct {
	// Prompt is the user's text; Messages, instead, a fixed chat sent as
	// it is (a JSONL "messages" line).
	Prompt   string
	Messages []tokenize.Message
	// Output is the expected answer length in tokens (JSONL
	// "output_tokens"); 0 when unknown.
	Output int
	// Reply is the recorded answer (ShareGPT); its token count is the
	// expected output length.
	Reply string
}

// LoadDataset reads and parses a prompt file. format is FormatJSONL,
// FormatShareGPT or "" to tell by content (a file that starts with "[" is
// ShareGPT). Errors name the file and line.
func LoadDataset(path, format string) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if format == "" {
		format = DetectFormat(data)
	}
	d := &Dataset{Path: path, Format: format}
	switch format {
	case FormatJSONL:
		d.Conversations, err = ParseJSONL(path, data)
	case FormatShareGPT:
		d.Conversations, err = ParseShareGPT(path, data)
	default:
		return nil, fmt.Errorf("%s: unknown dataset format %q (jsonl, sharegpt)", path, format)
	}
	if err != nil {
		return nil, err
	}
	if d.turns() == 0 {
		return nil, fmt.Errorf("%s: no prompts found", path)
	}
	return d, nil
}

// DetectFormat tells a ShareGPT file (a JSON array) from JSON Lines.
func DetectFormat(data []byte) string {
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '[' {
		return FormatShareGPT
	}
	return FormatJSONL
}

func (d *Dataset) turns() int {
	n := 0
	for _, c := range d.Conversations {
		n += len(c.Turns)
	}
	return n
}

// lineError is a parse error at a line of a file.
func lineError(path string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
}

// order yields indexes 0..n-1 in file order or shuffled, pass after pass.
type order struct {
	n       int
	shuffle bool
	rng     *rand.Rand
	perm    []int
	pos     int
}

func newOrder(n int, shuffle bool, seed uint64) *order {
	return &order{n: n, shuffle: shuffle, rng: rand.New(rand.NewPCG(seed, 0x64617461)), pos: n}
}

func (o *order) next() int {
	if o.pos == o.n {
		o.pos = 0
		if o.perm == nil {
			o.perm = make([]int, o.n)
			for i := range o.perm {
				o.perm[i] = i
			}
		}
		if o.shuffle {
			o.rng.Shuffle(o.n, func(i, j int) { o.perm[i], o.perm[j] = o.perm[j], o.perm[i] })
		}
	}
	o.pos++
	return o.perm[o.pos-1]
}

// counts caches the token counts of a dataset's turns: a server counter
// costs a round trip each, and every load point reads the same file.
type counts struct {
	size *sizer
	mu   sync.Mutex
	m    map[*Turn][2]int // prompt, output (content tokens of Reply)
}

// of returns turn t's prompt length (as the request is sized) and the
// length of its recorded reply (0 when it has none).
func (c *counts) of(ctx context.Context, t *Turn) (prompt, reply int, err error) {
	c.mu.Lock()
	v, ok := c.m[t]
	c.mu.Unlock()
	if ok {
		return v[0], v[1], nil
	}
	msgs := t.Messages
	if msgs == nil {
		msgs = user(t.Prompt)
	}
	if prompt, err = c.size.count(ctx, msgs); err != nil {
		return 0, 0, err
	}
	if t.Reply != "" {
		if reply, err = c.size.content(ctx, t.Reply); err != nil {
			return 0, 0, err
		}
	}
	c.mu.Lock()
	c.m[t] = [2]int{prompt, reply}
	c.mu.Unlock()
	return prompt, reply, nil
}

// datasetSource sends a dataset's turns one by one, each on its own (a
// ShareGPT conversation's human turns become separate prompts).
type datasetSource struct {
	d         *Dataset
	turns     []*Turn
	order     *order
	counts    *counts
	output    LengthDist
	rng       *rand.Rand
	maxPrompt int // skip prompts longer than this (0: no limit)
	context   int // skip requests whose prompt + output exceed this (0: no limit)
}

// Next returns the next turn that fits the limits; a whole pass over the
// file with none that fits is an error.
func (s *datasetSource) Next(ctx context.Context) (Item, error) {
	for range len(s.turns) {
		t := s.turns[s.order.next()]
		n, reply, err := s.counts.of(ctx, t)
		if err != nil {
			return Item{}, fmt.Errorf("%s: %w", s.d.Path, err)
		}
		out := outputFor(t, reply, s.output, s.rng)
		if (s.maxPrompt > 0 && n > s.maxPrompt) || (s.context > 0 && n+out > s.context) {
			continue
		}
		return Item{Prompt: t.Prompt, Messages: t.Messages, Want: n, Tokens: n,
			Source: s.counts.size.counter.Source(), Templated: s.counts.size.isTemplated(), MaxTokens: out}, nil
	}
	return Item{}, fmt.Errorf("%s: %w", s.d.Path, errNoFit)
}

var errNoFit = errors.New("no prompt fits the limits (max prompt tokens, context tokens)")

// outputFor is a turn's max_tokens: its own expected length, else its
// recorded reply's, else a draw.
func outputFor(t *Turn, reply int, d LengthDist, rng *rand.Rand) int {
	switch {
	case t.Output > 0:
		return t.Output
	case reply > 0:
		return reply
	}
	return d.Draw(rng)
}
