package backend

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// length counts bytes: a local tokenizer whose counts tests can choose.
type length struct{}

func (length) Count(s string) int { return len(s) }

// testStream returns a stream ready to take chunks without a server.
func testStream(counter TokenCounter) *stream { return testStreamFor(&openAIChat, counter) }

func testStreamFor(a *api, counter TokenCounter) *stream {
	c := &Client{api: a, counter: counter}
	return &stream{c: c, rec: &record.Record{}, sent: time.Now(), epoch: time.Now(),
		wire: a.wire, dec: a.wire.events(), chunks: a.wire.chunks()}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name    string
		texts   []string // chunk texts; the counter counts bytes
		counter TokenCounter
		total   int
		want    []int
	}{
		// Equal weights: the leftover goes to the earliest chunks.
		{"even", []string{"a", "b", "c"}, nil, 10, []int{4, 3, 3}},
		// Fewer tokens than chunks: some chunks carry none.
		{"short", []string{"a", "b", "c"}, nil, 2, []int{1, 1, 0}},
		// Weights from the tokenizer; a chunk with no countable text weighs 1.
		{"weighted", []string{"aaaa", "", "b"}, length{}, 12, []int{8, 2, 2}},
		{"largest remainder", []string{"aa", "a", "aaa"}, length{}, 4, []int{1, 1, 2}},
		// Total equal to the chunk count: one each, whatever the weights.
		{"one each", []string{"aaaa", "b"}, length{}, 2, []int{1, 1}},
		// A usage report of 0 tokens for a stream with text is ignored.
		{"bogus zero", []string{"a", "b"}, nil, 0, []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testStream(tt.counter)
			for _, x := range tt.texts {
				s.add(time.Now(), []byte(x+"!"), nil) // "!" makes every chunk content-bearing
			}
			s.texts, s.ends = nil, nil
			for _, x := range tt.texts {
				s.texts = append(s.texts, x...)
				s.ends = append(s.ends, len(s.texts))
			}
			s.output, s.hasOutput = tt.total, true
			s.countTokens()
			if got := tokens(s.rec.Chunks); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// FuzzSpread checks the spreading rule's invariants: shares sum to the
// total and each is within one token of its exact proportional share
// (or is 1 when there are as many tokens as chunks).
func FuzzSpread(f *testing.F) {
	f.Add(uint16(10), []byte{1, 2, 3})
	f.Add(uint16(1), []byte{0, 0, 9})
	f.Fuzz(func(t *testing.T, total uint16, weights []byte) {
		if len(weights) == 0 || len(weights) > 512 || total == 0 {
			return // a usage of 0 tokens is ignored (see TestSpread)
		}
		s := testStream(length{})
		sum := 0
		for _, w := range weights {
			s.add(time.Now(), bytes.Repeat([]byte("x"), int(w)), nil)
		}
		// add ignores empty texts, so recompute the weights actually used.
		for i := range s.rec.Chunks {
			sum += max(1, len(s.chunkText(i)))
		}
		s.output, s.hasOutput = int(total), true
		s.countTokens()
		got := 0
		for i, ch := range s.rec.Chunks {
			got += ch.Tokens
			exact := float64(total) * float64(max(1, len(s.chunkText(i)))) / float64(sum)
			if int(total) == len(s.rec.Chunks) {
				exact = 1 // the rule: as many tokens as chunks means one each
			}
			if d := float64(ch.Tokens) - exact; d <= -1 || d >= 1 {
				t.Fatalf("chunk %d has %d tokens, exact share %.2f", i, ch.Tokens, exact)
			}
		}
		if len(s.rec.Chunks) > 0 && (got != int(total) || s.rec.OutputTokens != int(total)) {
			t.Fatalf("shares sum to %d, output %d, want %d", got, s.rec.OutputTokens, total)
		}
	})
}

// FuzzOpenAIChunk feeds arbitrary events to the OpenAI chunk parser: it
// must not panic, and chunk shares must add up to the output count.
func FuzzOpenAIChunk(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"content":"a"}}]}` + "\n" + `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}`))
	f.Add([]byte(`{"choices":[{"delta":{"reasoning_content":"r"}}]}` + "\n" + `{"choices":[{"text":"t","finish_reason":"stop"}],"timings":{"prompt_ms":1}}` + "\n[DONE]"))
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := testStream(words{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if s.chunks.event(s, sse.Event{Data: line, At: time.Now()}, false) {
				break
			}
		}
		checkCounts(t, s)
	})
}

// FuzzOllamaChunk does the same for Ollama's NDJSON lines.
func FuzzOllamaChunk(f *testing.F) {
	f.Add([]byte(`{"message":{"content":"a","thinking":"t"},"done":false}` + "\n" + `{"done":true,"eval_count":3,"prompt_eval_count":2}`))
	f.Add([]byte(`{"response":"a"}` + "\n" + `{"error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := testStreamFor(&ollamaChat, nil)
		for _, line := range bytes.Split(data, []byte("\n")) {
			if s.chunks.event(s, sse.Event{Data: line, At: time.Now()}, false) {
				break
			}
		}
		checkCounts(t, s)
	})
}

func checkCounts(t *testing.T, s *stream) {
	s.countTokens()
	rec := s.rec
	sum := 0
	for _, c := range rec.Chunks {
		if c.Tokens < 0 {
			t.Fatalf("negative share %d", c.Tokens)
		}
		sum += c.Tokens
	}
	if len(rec.Chunks) > 0 && sum != rec.OutputTokens {
		t.Fatalf("shares sum to %d, output %d", sum, rec.OutputTokens)
	}
	if rec.OutputTokens < 0 || rec.ReasoningTokens < 0 || rec.PromptTokens < 0 {
		t.Fatalf("negative count in %+v", rec)
	}
}
