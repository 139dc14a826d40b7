package backend

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// openAIBody holds the fields both OpenAI APIs send.
func (c *Client) openAIBody(r *Request) map[string]any {
	m := c.newBody()
	if c.model != "" {
		m["model"] = c.model
	}
	m["stream"] = true
	m["stream_options"] = map[string]any{"include_usage": true}
	if r.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: every OpenAI-compatible
		// server (vLLM, SGLang, TGI, llama.cpp, Ollama) accepts it.
		m["max_tokens"] = r.MaxTokens
		// Without a max_tokens, ignore_eos would generate up to the
		// context length, so it is sent only with one.
		if c.ignoreEOS {
			m["ignore_eos"] = true
			m["min_tokens"] = r.MaxTokens
		}
	}
	return m
}

// openAIChunk is the part of a streamed chunk that servebench reads, for
// both chat (delta) and completions (text).
type openAIChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *openAIUsage    `json:"usage"`
	Timings *llamaTimings   `json:"timings"`
	Error   json.RawMessage `json:"error"`
	// Older vLLM streams errors as {"object": "error", "message": ...}.
	Object  string `json:"object"`
	Message string `json:"message"`
}

type openAIUsage struct {
	PromptTokens        *int `json:"prompt_tokens"`
	CompletionTokens    *int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// llamaTimings is llama.cpp server's per-response timing report.
type llamaTimings struct {
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
	CacheN      int     `json:"cache_n"`
}

// reset empties c for the next chunk. encoding/json decodes into the
// existing slice elements without zeroing them, so they are cleared here.
func (c *openAIChunk) reset() {
	ch := c.Choices[:cap(c.Choices)]
	clear(ch)
	*c = openAIChunk{Choices: ch[:0]}
}

var doneMarker = []byte("[DONE]")

// readOpenAI reads an SSE stream until [DONE] or a failure.
func (s *stream) readOpenAI(body io.Reader) {
	if s.sse == nil {
		s.sse = sse.NewDecoder(body, time.Now)
	} else {
		s.sse.Reset(body, time.Now)
	}
	d := s.sse
	for d.Next() {
		s.events++
		if s.openAIEvent(d.Event(), d.Truncated()) {
			return
		}
	}
	s.cut(d.Err(), d.Stray(), "[DONE]")
}

// openAIEvent handles one event; it reports whether the stream is over.
func (s *stream) openAIEvent(ev sse.Event, truncated bool) bool {
	data := bytes.TrimSpace(ev.Data)
	switch {
	case ev.Event == "error":
		s.serverError(ev.At, sseErrorText(s.c.redactBytes(data)))
		return true
	case bytes.Equal(data, doneMarker):
		s.ended(ev.At, "[DONE]")
		return true
	case len(data) == 0:
		return false
	}
	s.joined = s.joined[:0]
	if f := &s.fastOA; s.scan.openAI(data, f) {
		if len(f.finish) > 0 && string(f.finish) != s.rec.FinishReason {
			s.rec.FinishReason = string(f.finish)
		}
		if f.choice {
			s.add(ev.At, s.join(f.text, f.content), firstNonEmpty(f.reasoningContent, f.reasoning))
		}
		return false
	}
	return s.openAISlow(ev, data, truncated)
}

// openAISlow decodes a chunk with encoding/json: chunks with usage,
// timings or an error, and whatever the fast path declines.
func (s *stream) openAISlow(ev sse.Event, data []byte, truncated bool) bool {
	c := &s.oa
	c.reset()
	if err := json.Unmarshal(data, c); err != nil {
		s.badChunk(ev.At, data, err, truncated)
		return true
	}
	if c.Object == "error" {
		s.serverError(ev.At, s.c.redact(c.Message))
		return true
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		s.serverError(ev.At, errorText(s.c.redactBytes(c.Error)))
		return true
	}
	if c.Usage != nil {
		s.openAIUsage(c.Usage)
	}
	if t := c.Timings; t != nil {
		srv := s.server()
		srv.PromptEvalCount, srv.PromptEvalDuration = t.PromptN, msToNS(t.PromptMS)
		srv.EvalCount, srv.EvalDuration = t.PredictedN, msToNS(t.PredictedMS)
		srv.CachedTokens = t.CacheN
	}
	if len(c.Choices) > 0 {
		ch := &c.Choices[0]
		if ch.FinishReason != "" {
			s.rec.FinishReason = ch.FinishReason
		}
		s.add(ev.At, []byte(ch.Text+ch.Delta.Content), []byte(cmp.Or(ch.Delta.ReasoningContent, ch.Delta.Reasoning)))
	}
	return false
}

func (s *stream) openAIUsage(u *openAIUsage) {
	if u.PromptTokens != nil && *u.PromptTokens > 0 {
		s.prompt, s.hasPrompt = *u.PromptTokens, true
	}
	if u.CompletionTokens != nil {
		s.output, s.hasOutput = *u.CompletionTokens, true
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		s.server().CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
		s.reasoning, s.hasReasoning = *d.ReasoningTokens, true
	}
}

// server returns the record's server timing, creating it.
func (s *stream) server() *record.ServerTiming {
	if s.rec.Server == nil {
		s.rec.Server = new(record.ServerTiming)
	}
	return s.rec.Server
}

func msToNS(ms float64) int64 { return int64(ms * 1e6) }

// sseErrorText is the message of an "event: error" event: a JSON error
// body's message, or the data as text.
func sseErrorText(data []byte) string {
	if msg, ok := jsonError(data); ok {
		return msg
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return string(data)
}

// openAIText is what the fast path reads from an ordinary chunk; the
// slices point into the chunk or the scanner's buffer.
type openAIText struct {
	choice                                             bool // choices had an element
	text, content, reasoningContent, reasoning, finish []byte
}

var (
	openAIKeys = []string{"choices", "usage", "timings", "error", "object", "message"}
	choiceKeys = []string{"text", "delta", "finish_reason"}
	deltaKeys  = []string{"content", "reasoning_content", "reasoning"}
)

// openAI reads an ordinary chunk: choices, and no usage, timings or
// error. It returns false when the chunk is for encoding/json.
func (s *jsonScan) openAI(data []byte, out *openAIText) bool {
	s.reset(data)
	*out = openAIText{}
	if !s.open('{') {
		return false
	}
	seenChoices := false
	for first := true; ; first = false {
		key, ok := s.member(first)
		if !ok {
			break
		}
		switch string(key) {
		case "choices":
			if seenChoices {
				return false // encoding/json reuses elements: not worth copying
			}
			seenChoices = true
			s.choices(out)
		case "usage", "timings", "error":
			if !s.null() {
				return false
			}
		case "object":
			var v []byte
			if s.textInto(&v); string(v) == "error" {
				return false
			}
		case "message":
			var v []byte
			s.textInto(&v)
		default:
			if folded(key, openAIKeys) {
				return false
			}
			s.skip()
		}
		if s.bad {
			return false
		}
	}
	return s.end()
}

func (s *jsonScan) choices(out *openAIText) {
	if s.null() || !s.open('[') {
		return
	}
	var rest openAIText
	for first := true; !s.bad && s.elem(first); first = false {
		if first {
			out.choice = true
			s.choice(out)
		} else {
			s.choice(&rest) // decoded only to check it as encoding/json would
		}
	}
}

func (s *jsonScan) choice(out *openAIText) {
	s.fields(choiceKeys, func(key []byte) bool {
		switch string(key) {
		case "text":
			s.textInto(&out.text)
		case "finish_reason":
			s.textInto(&out.finish)
		case "delta":
			s.delta(out)
		default:
			return false
		}
		return true
	})
}

func (s *jsonScan) delta(out *openAIText) {
	s.fields(deltaKeys, func(key []byte) bool {
		switch string(key) {
		case "content":
			s.textInto(&out.content)
		case "reasoning_content":
			s.textInto(&out.reasoningContent)
		case "reasoning":
			s.textInto(&out.reasoning)
		default:
			return false
		}
		return true
	})
}
