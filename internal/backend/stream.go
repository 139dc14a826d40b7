package backend

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// stream is the state of one request while its answer streams in. It is
// pooled so that a run of many requests reuses the decoders' buffers.
type stream struct {
	c      *Client
	rec    *record.Record
	ctx    context.Context
	parent context.Context
	epoch  time.Time
	sent   time.Time
	first  *time.Timer
	// status is the response's status code.
	status int
	// events counts the events (lines) read; done is set when the
	// end-of-stream marker was read.
	events int
	done   bool
	// reply collects the answer text when the request asked for it.
	reply *strings.Builder

	// What the server reported; the has* flags say whether it did.
	output, prompt, reasoning          int
	hasOutput, hasPrompt, hasReasoning bool

	// texts holds each chunk's text back to back, ends[i] the end of chunk
	// i's; kept only when there is a local tokenizer to count them.
	texts []byte
	ends  []int
	// Scratch for spread.
	idx, weights, order []int
	rem                 []int

	// The decoders of the stream's wire: they and their buffers are kept
	// for the next request of the same wire.
	wire   *wire
	dec    sse.Decoder
	chunks chunkDecoder
}

var streams = sync.Pool{New: func() any { return new(stream) }}

func newStream(ctx context.Context, c *Client, rec *record.Record, epoch time.Time) *stream {
	s := streams.Get().(*stream)
	s.c, s.rec, s.parent, s.ctx, s.epoch = c, rec, ctx, ctx, epoch
	if w := c.api.wire; s.wire != w {
		s.wire, s.dec, s.chunks = w, w.events(), w.chunks()
	}
	return s
}

// release returns s to the pool, dropping references and oversized
// buffers.
func (s *stream) release() {
	if s.dec != nil {
		s.dec.Reset(nil, nil) // drop the body, which may still be draining
		s.chunks.reset()
	}
	texts, ends := s.texts[:0], s.ends[:0]
	if cap(texts) > 1<<20 {
		texts, ends = nil, nil
	}
	*s = stream{texts: texts, ends: ends, idx: s.idx[:0], weights: s.weights[:0],
		order: s.order[:0], rem: s.rem[:0], wire: s.wire, dec: s.dec, chunks: s.chunks}
	streams.Put(s)
}

// add records a content-bearing chunk read at at. A chunk with neither
// answer nor reasoning text is not a token and is ignored.
func (s *stream) add(at time.Time, text, reasoning []byte) {
	if len(text) == 0 && len(reasoning) == 0 {
		return
	}
	rec := s.rec
	isReasoning := len(text) == 0
	rec.Chunks = append(rec.Chunks, record.Chunk{AtNS: int64(at.Sub(s.sent)), Reasoning: isReasoning})
	if rec.FirstTokenNS == 0 {
		rec.FirstTokenNS = ns(at, s.epoch)
		if s.first != nil {
			s.first.Stop()
		}
	}
	if !isReasoning && rec.FirstOutputNS == 0 {
		rec.FirstOutputNS = ns(at, s.epoch)
	}
	if s.reply != nil {
		s.reply.Write(text)
	}
	if s.c.counter != nil {
		s.texts = append(append(s.texts, reasoning...), text...)
		s.ends = append(s.ends, len(s.texts))
	}
}

func (s *stream) end(at time.Time) { s.rec.EndNS = ns(at, s.epoch) }

// chunkText is chunk i's text (only with a local tokenizer).
func (s *stream) chunkText(i int) string {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return string(s.texts[start:s.ends[i]])
}

// countTokens fills the record's token counts and every chunk's Tokens,
// by the rule in the package documentation.
func (s *stream) countTokens() {
	rec := s.rec
	if s.hasPrompt {
		rec.PromptTokens, rec.PromptTokensSource = s.prompt, record.SourceUsage
	}
	n := len(rec.Chunks)
	total, source := n, record.SourceChunks
	switch {
	case s.hasOutput && (s.output > 0 || n == 0):
		total, source = s.output, record.SourceUsage
	case s.c.counter != nil && n > 0:
		total, source = s.c.counter.Count(string(s.texts)), record.SourceLocal
	}
	total = max(total, 0)
	rec.OutputTokens, rec.OutputTokensSource = total, source

	nr := 0
	for _, ch := range rec.Chunks {
		if ch.Reasoning {
			nr++
		}
	}
	if r := s.reasoning; s.hasReasoning && r >= 0 && r <= total && nr > 0 && nr < n {
		s.spread(s.group(true), r)
		s.spread(s.group(false), total-r)
	} else {
		s.spread(s.all(), total)
	}
	if s.hasReasoning {
		rec.ReasoningTokens = max(s.reasoning, 0)
		return
	}
	rec.ReasoningTokens = 0
	for _, ch := range rec.Chunks {
		if ch.Reasoning {
			rec.ReasoningTokens += ch.Tokens
		}
	}
}

func (s *stream) group(reasoning bool) []int {
	s.idx = s.idx[:0]
	for i, ch := range s.rec.Chunks {
		if ch.Reasoning == reasoning {
			s.idx = append(s.idx, i)
		}
	}
	return s.idx
}

func (s *stream) all() []int {
	s.idx = s.idx[:0]
	for i := range s.rec.Chunks {
		s.idx = append(s.idx, i)
	}
	return s.idx
}

// spread sets Tokens on the chunks at idx so that they sum to total, by
// the rule in countTokens.
func (s *stream) spread(idx []int, total int) {
	chunks := s.rec.Chunks
	if len(idx) == 0 {
		return
	}
	if total == len(idx) {
		for _, i := range idx {
			chunks[i].Tokens = 1
		}
		return
	}
	s.weights, s.rem, s.order = s.weights[:0], s.rem[:0], s.order[:0]
	sum := 0
	for _, i := range idx {
		w := 1
		if s.c.counter != nil {
			w = max(1, s.c.counter.Count(s.chunkText(i)))
		}
		s.weights = append(s.weights, w)
		sum += w
	}
	left := total
	for k, i := range idx {
		chunks[i].Tokens = total * s.weights[k] / sum
		left -= chunks[i].Tokens
		s.rem = append(s.rem, total*s.weights[k]%sum)
		s.order = append(s.order, k)
	}
	slices.SortStableFunc(s.order, func(a, b int) int { return cmp.Compare(s.rem[b], s.rem[a]) })
	for _, k := range s.order[:left] {
		chunks[idx[k]].Tokens++
	}
}
