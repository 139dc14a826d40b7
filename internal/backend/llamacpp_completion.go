package backend

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// llamaCppCompletion is llama.cpp server's native POST /completion. Each
// token is an SSE event {"content", "stop": false, ...}; the last event has
// "stop": true, the counts (tokens_predicted, tokens_evaluated), stop_type
// and the timings object, and no [DONE] follows it (the server sends
// [DONE] only on its OpenAI endpoints). Upstream: tools/server/server-task.cpp
// (server_task_result_cmpl_partial and _final, to_json_non_oaicompat).
var llamaCppCompletion = api{
	name:   record.APILlamaCppCompletion,
	path:   "/completion",
	accept: "text/event-stream",
	wire:   &llamaCppWire,
	body: func(c *Client, r *Request) (map[string]any, error) {
		if r.Prompt == "" {
			if len(r.Messages) > 0 {
				return nil, errors.New("the llamacpp-completion API takes a prompt, not chat messages")
			}
			return nil, errNoPrompt
		}
		m := c.newBody()
		if c.model != "" {
			m["model"] = c.model // a router serving several models picks by it
		}
		m["prompt"] = r.Prompt
		m["stream"] = true
		if r.MaxTokens > 0 {
			m["n_predict"] = r.MaxTokens
			if c.ignoreEOS {
				m["ignore_eos"] = true
			}
		}
		return m, nil
	},
}

// llamaCppWire is /completion's SSE, which ends with the event whose
// "stop" is true.
var llamaCppWire = wire{
	models:  "/v1/models",
	health:  "/health",
	accepts: func(mt string) bool { return mt == "text/event-stream" },
	marker:  `"stop": true`,
	events:  func() sse.Decoder { return sse.NewEventStream(nil, nil) },
	chunks:  func() chunkDecoder { return new(llamaCppDecoder) },
}

// llamaCppChunk is the part of a /completion event servebench reads.
type llamaCppChunk struct {
	Content         string          `json:"content"`
	Stop            bool            `json:"stop"`
	StopType        string          `json:"stop_type"`
	TokensPredicted *int            `json:"tokens_predicted"`
	TokensEvaluated *int            `json:"tokens_evaluated"`
	Timings         *llamaTimings   `json:"timings"`
	Error           json.RawMessage `json:"error"`
}

// nativeEvent is what the native engines' event handlers share: an SSE
// error event, an empty event, [DONE] (sent by none of them, but
// unambiguous), a body that is not JSON or whose error field is set. Else
// it decodes the event into c (zeroed first) and leaves it to the caller:
// handled false. done says whether the stream is over.
func nativeEvent[C any](s *stream, ev sse.Event, truncated bool, c *C, errOf func(*C) json.RawMessage) (handled, done bool) {
	data := bytes.TrimSpace(ev.Data)
	switch {
	case ev.Event == "error":
		s.serverError(ev.At, sseErrorText(s.c.redactBytes(data)))
		return true, true
	case len(data) == 0:
		return true, false
	case bytes.Equal(data, doneMarker):
		s.ended(ev.At)
		return true, true
	}
	var zero C
	*c = zero
	if err := json.Unmarshal(data, c); err != nil {
		s.badChunk(ev.At, data, err, truncated)
		return true, true
	}
	if e := errOf(c); len(e) > 0 && string(e) != "null" {
		s.serverError(ev.At, errorText(s.c.redactBytes(e)))
		return true, true
	}
	return false, false
}

// llamaCppDecoder reads /completion events with encoding/json.
type llamaCppDecoder struct{ c llamaCppChunk }

func (d *llamaCppDecoder) reset() { d.c = llamaCppChunk{} }

// event handles one event; it reports whether the stream is over.
func (d *llamaCppDecoder) event(s *stream, ev sse.Event, truncated bool) bool {
	c := &d.c
	if handled, done := nativeEvent(s, ev, truncated, c, func(c *llamaCppChunk) json.RawMessage { return c.Error }); handled {
		return done
	}
	s.add(ev.At, []byte(c.Content), nil)
	if t := c.Timings; t != nil {
		s.llamaTimings(t)
	}
	if !c.Stop {
		return false
	}
	if n := c.TokensEvaluated; n != nil && *n > 0 {
		s.prompt, s.hasPrompt = *n, true
	}
	if n := c.TokensPredicted; n != nil {
		s.output, s.hasOutput = *n, true
	}
	s.rec.FinishReason = llamaCppFinish(c.StopType)
	s.ended(ev.At)
	return true
}

// llamaTimings keeps llama.cpp's timings (its native and OpenAI
// endpoints send the same object): prompt_n tokens were evaluated in
// prompt_ms (the cache_n cached ones not among them), predicted_n
// generated in predicted_ms.
func (s *stream) llamaTimings(t *llamaTimings) {
	srv := s.server()
	srv.PromptEvalCount, srv.PromptEvalDuration = t.PromptN, msToNS(t.PromptMS)
	srv.EvalCount, srv.EvalDuration = t.PredictedN, msToNS(t.PredictedMS)
	if t.CacheN != nil {
		srv.CachedTokens = new(*t.CacheN)
	}
}

// llamaCppFinish names a stop_type in the records' words: "eos" and
// "word" (a stop string) are "stop", "limit" (n_predict or the context)
// is "length"; anything else is kept as sent.
func llamaCppFinish(stopType string) string {
	switch stopType {
	case "eos", "word":
		return "stop"
	case "limit":
		return "length"
	}
	return stopType
}
