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
		if c.ignoreEOS {
			m["ignore_eos"] = true
			m["min_tokens"] = r.MaxTokens
		}
	} else if c.ignoreEOS {
		m["ignore_eos"] = true
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
		if s.openAIEvent(d.Event(), d.Truncated()) {
			return
		}
	}
	s.cut(d.Err(), "[DONE]")
}

// openAIEvent handles one event; it reports whether the stream is over.
func (s *stream) openAIEvent(ev sse.Event, truncated bool) bool {
	data := bytes.TrimSpace(ev.Data)
	switch {
	case ev.Event == "error":
		s.serverError(ev.At, sseErrorText(s.c.redactBytes(data)))
		return true
	case bytes.Equal(data, doneMarker):
		s.done = true
		s.end(ev.At)
		return true
	case len(data) == 0:
		return false
	}
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
		s.server().PromptEvalCount, s.server().PromptEvalDuration = t.PromptN, msToNS(t.PromptMS)
		s.server().EvalCount, s.server().EvalDuration = t.PredictedN, msToNS(t.PredictedMS)
		s.server().CachedTokens = t.CacheN
	}
	if len(c.Choices) > 0 {
		ch := &c.Choices[0]
		if ch.FinishReason != "" {
			s.rec.FinishReason = ch.FinishReason
		}
		s.add(ev.At, ch.Text+ch.Delta.Content, cmp.Or(ch.Delta.ReasoningContent, ch.Delta.Reasoning))
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
