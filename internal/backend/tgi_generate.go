package backend

import (
	"encoding/json"
	"errors"
	"maps"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// tgiGenerate is TGI's POST /generate_stream with parameters.details. Each
// token is an SSE event {"index", "token": {"id", "text", "logprob",
// "special"}, "generated_text": null, "details": null}; the last one
// carries the whole generated_text and details {finish_reason,
// generated_tokens, seed, input_length}, and no [DONE] follows it. An
// error mid-stream is an event {"error", "error_type"}. TGI reports no
// timings in the stream. Upstream: router/src/lib.rs (StreamResponse,
// StreamDetails) and router/src/server.rs (generate_stream_internal).
var tgiGenerate = api{
	name:   record.APITGIGenerate,
	path:   "/generate_stream",
	accept: "text/event-stream",
	wire:   &tgiWire,
	body: func(c *Client, r *Request) (map[string]any, error) {
		if r.Prompt == "" {
			if len(r.Messages) > 0 {
				return nil, errors.New("the tgi-generate API takes a prompt, not chat messages")
			}
			return nil, errNoPrompt
		}
		m := c.newBody()
		m["inputs"] = r.Prompt
		params := map[string]any{}
		if user, ok := c.extra["parameters"].(map[string]any); ok {
			maps.Copy(params, user)
		}
		// details makes the last event carry the token count and finish
		// reason. TGI has no ignore_eos, so IgnoreEOS sends nothing.
		params["details"] = true
		if r.MaxTokens > 0 {
			params["max_new_tokens"] = r.MaxTokens
		}
		m["parameters"] = params
		return m, nil
	},
}

// tgiWire is /generate_stream's SSE, which ends with the event that has
// generated_text.
var tgiWire = wire{
	models:  "/info",
	health:  "/health",
	accepts: func(mt string) bool { return mt == "text/event-stream" },
	marker:  "generated_text",
	events:  func() sse.Decoder { return sse.NewEventStream(nil, nil) },
	chunks:  func() chunkDecoder { return new(tgiDecoder) },
}

type tgiChunk struct {
	Token         *tgiToken       `json:"token"`
	GeneratedText *string         `json:"generated_text"`
	Details       *tgiDetails     `json:"details"`
	Error         json.RawMessage `json:"error"`
}

type tgiToken struct {
	Text    string `json:"text"`
	Special bool   `json:"special"`
}

type tgiDetails struct {
	FinishReason    string `json:"finish_reason"`
	GeneratedTokens *int   `json:"generated_tokens"`
	InputLength     *int   `json:"input_length"`
}

// tgiDecoder reads /generate_stream events with encoding/json.
type tgiDecoder struct{ c tgiChunk }

func (d *tgiDecoder) reset() { d.c = tgiChunk{} }

// event handles one event; it reports whether the stream is over. A
// special token (the end-of-sequence token) is not answer text: TGI
// leaves it out of generated_text, and it is no content-bearing chunk.
func (d *tgiDecoder) event(s *stream, ev sse.Event, truncated bool) bool {
	c := &d.c
	if handled, done := nativeEvent(s, ev, truncated, c, func(c *tgiChunk) json.RawMessage { return c.Error }); handled {
		return done
	}
	if t := c.Token; t != nil && !t.Special {
		s.add(ev.At, []byte(t.Text), nil)
	}
	if c.GeneratedText == nil {
		return false
	}
	if det := c.Details; det != nil {
		if n := det.GeneratedTokens; n != nil {
			s.output, s.hasOutput = *n, true
		}
		if n := det.InputLength; n != nil && *n > 0 {
			s.prompt, s.hasPrompt = *n, true
		}
		s.rec.FinishReason = tgiFinish(det.FinishReason)
	}
	s.ended(ev.At)
	return true
}

// tgiFinish names a finish_reason in the records' words: "eos_token" and
// "stop_sequence" are "stop"; "length" stays.
func tgiFinish(reason string) string {
	switch reason {
	case "eos_token", "stop_sequence":
		return "stop"
	}
	return reason
}
