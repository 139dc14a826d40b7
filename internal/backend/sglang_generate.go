package backend

import (
	"encoding/json"
	"errors"
	"maps"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// sglangGenerate is SGLang's native POST /generate with stream: true.
// Each event is {"text": <the whole text so far>, "output_ids", "meta_info":
// {"id", "finish_reason", "prompt_tokens", "completion_tokens",
// "cached_tokens", ...}}; the event that finishes has a finish_reason
// object ({"type": "length"|"stop"|"abort", ...}) and meta_info.e2e_latency
// (seconds); then data: [DONE]. An error is an event {"error": {"message"}}.
// Upstream: python/sglang/srt/entrypoints/http_server.py (generate_request)
// and python/sglang/srt/managers/tokenizer_manager.py (_handle_batch_output).
var sglangGenerate = api{
	name:   record.APISGLangGenerate,
	path:   "/generate",
	accept: "text/event-stream",
	wire:   &sglangWire,
	body: func(c *Client, r *Request) (map[string]any, error) {
		if r.Prompt == "" {
			if len(r.Messages) > 0 {
				return nil, errors.New("the sglang-generate API takes a prompt, not chat messages")
			}
			return nil, errNoPrompt
		}
		m := c.newBody()
		m["text"] = r.Prompt
		m["stream"] = true
		params := map[string]any{}
		if user, ok := c.extra["sampling_params"].(map[string]any); ok {
			maps.Copy(params, user)
		}
		if r.MaxTokens > 0 {
			params["max_new_tokens"] = r.MaxTokens
			if c.ignoreEOS {
				params["ignore_eos"] = true
				params["min_new_tokens"] = r.MaxTokens
			}
		}
		if len(params) > 0 {
			m["sampling_params"] = params
		}
		return m, nil
	},
}

// sglangWire is /generate's SSE, ending in [DONE].
var sglangWire = wire{
	models:  "/get_model_info",
	health:  "/health",
	accepts: func(mt string) bool { return mt == "text/event-stream" },
	marker:  "[DONE]",
	events:  func() sse.Decoder { return sse.NewEventStream(nil, nil) },
	chunks:  func() chunkDecoder { return new(sglangDecoder) },
}

type sglangChunk struct {
	Text     *string         `json:"text"`
	MetaInfo *sglangMeta     `json:"meta_info"`
	Error    json.RawMessage `json:"error"`
}

type sglangMeta struct {
	FinishReason     json.RawMessage `json:"finish_reason"`
	PromptTokens     *int            `json:"prompt_tokens"`
	CompletionTokens *int            `json:"completion_tokens"`
	CachedTokens     *int            `json:"cached_tokens"`
	E2ELatency       *float64        `json:"e2e_latency"`
}

// sglangDecoder reads /generate events with encoding/json. SGLang sends
// the whole text so far in every event, so each chunk's new text is what
// follows the text of the event before; a server started with
// --incremental-streaming-output sends only the new text, which is taken
// as it is whenever it does not continue the text so far.
type sglangDecoder struct {
	c    sglangChunk
	text []byte
}

func (d *sglangDecoder) reset() { d.c, d.text = sglangChunk{}, d.text[:0] }

// event handles one event; it reports whether the stream is over.
func (d *sglangDecoder) event(s *stream, ev sse.Event, truncated bool) bool {
	c := &d.c
	if handled, done := nativeEvent(s, ev, truncated, c, func(c *sglangChunk) json.RawMessage { return c.Error }); handled {
		return done
	}
	if c.Text != nil {
		s.add(ev.At, d.newText(*c.Text), nil)
	}
	if m := c.MetaInfo; m != nil {
		s.sglangMeta(m)
		if reason, msg := sglangFinish(m.FinishReason); reason == "abort" {
			s.serverError(ev.At, "the server aborted the request: "+s.c.redact(msg))
			return true
		}
	}
	return false
}

// newText returns what text adds to the text so far, and makes it the
// text so far.
func (d *sglangDecoder) newText(text string) []byte {
	if len(text) >= len(d.text) && text[:len(d.text)] == string(d.text) {
		start := len(d.text)
		d.text = append(d.text[:0], text...)
		return d.text[start:]
	}
	d.text = append(d.text, text...)
	return d.text[len(d.text)-len(text):]
}

// sglangMeta keeps the counts of the latest meta_info (each event
// repeats them, up to date), and the finish reason and latency of the
// last.
func (s *stream) sglangMeta(m *sglangMeta) {
	if n := m.PromptTokens; n != nil && *n > 0 {
		s.prompt, s.hasPrompt = *n, true
	}
	if n := m.CompletionTokens; n != nil {
		s.output, s.hasOutput = *n, true
	}
	if n := m.CachedTokens; n != nil && *n >= 0 {
		// meta_info always carries cached_tokens, 0 included: a reported
		// miss, unlike the OpenAI usage's absent details.
		s.server().CachedTokens = new(*n)
	}
	if l := m.E2ELatency; l != nil && *l > 0 {
		s.server().TotalDuration = int64(*l * 1e9)
	}
	if r, _ := sglangFinish(m.FinishReason); r != "" {
		s.rec.FinishReason = r
	}
}

// sglangFinish reads a finish_reason: an object whose type is "length",
// "stop" or "abort", with an abort's message (older servers sent a
// string), or null.
func sglangFinish(raw json.RawMessage) (reason, msg string) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", ""
	}
	var obj struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Type != "" {
		return obj.Type, obj.Message
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, ""
	}
	return "", ""
}
