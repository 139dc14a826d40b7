package backend

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/servebench/servebench/internal/sse"
)

// ollamaBody holds the fields both Ollama APIs send. Ollama has no
// ignore_eos or min_tokens, so IgnoreEOS sends nothing.
func (c *Client) ollamaBody(r *Request) map[string]any {
	m := c.newBody()
	m["model"] = c.model
	m["stream"] = true
	if r.MaxTokens > 0 {
		opts := map[string]any{}
		if user, ok := c.extra["options"].(map[string]any); ok {
			for k, v := range user {
				opts[k] = v
			}
		}
		opts["num_predict"] = r.MaxTokens
		m["options"] = opts
	}
	return m
}

// ollamaChunk is one NDJSON line of /api/chat or /api/generate. The
// timing fields come only in the last line, the one with done: true.
type ollamaChunk struct {
	Response string `json:"response"`
	Thinking string `json:"thinking"`
	Message  struct {
		Content  string `json:"content"`
		Thinking string `json:"thinking"`
	} `json:"message"`
	Done       bool            `json:"done"`
	DoneReason string          `json:"done_reason"`
	Error      json.RawMessage `json:"error"`

	PromptEvalCount    *int  `json:"prompt_eval_count"`
	PromptEvalDuration int64 `json:"prompt_eval_duration"`
	EvalCount          *int  `json:"eval_count"`
	EvalDuration       int64 `json:"eval_duration"`
	LoadDuration       int64 `json:"load_duration"`
	TotalDuration      int64 `json:"total_duration"`
}

// readOllama reads an NDJSON stream until "done": true or a failure.
func (s *stream) readOllama(body io.Reader) {
	if s.nd == nil {
		s.nd = sse.NewNDJSONDecoder(body, time.Now)
	} else {
		s.nd.Reset(body, time.Now)
	}
	d := s.nd
	for d.Next() {
		s.events++
		if s.ollamaLine(d.Event(), d.Truncated()) {
			return
		}
	}
	s.cut(d.Err(), nil, `"done": true`)
}

// ollamaLine handles one line; it reports whether the stream is over.
func (s *stream) ollamaLine(ev sse.Event, truncated bool) bool {
	s.joined = s.joined[:0]
	if f := &s.fastOL; s.scan.ollama(ev.Data, f) {
		s.add(ev.At, s.join(f.content, f.response), s.join(f.msgThinking, f.thinking))
		return false
	}
	c := &s.ol
	*c = ollamaChunk{}
	if err := json.Unmarshal(ev.Data, c); err != nil {
		s.badChunk(ev.At, ev.Data, err, truncated)
		return true
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		s.serverError(ev.At, errorText(s.c.redactBytes(c.Error)))
		return true
	}
	s.add(ev.At, []byte(c.Message.Content+c.Response), []byte(c.Message.Thinking+c.Thinking))
	if !c.Done {
		return false
	}
	if c.PromptEvalCount != nil && *c.PromptEvalCount > 0 {
		s.prompt, s.hasPrompt = *c.PromptEvalCount, true
	}
	srv := s.server()
	if c.EvalCount != nil {
		s.output, s.hasOutput = *c.EvalCount, true
		srv.EvalCount = *c.EvalCount
	}
	if c.PromptEvalCount != nil {
		srv.PromptEvalCount = *c.PromptEvalCount
	}
	srv.PromptEvalDuration, srv.EvalDuration = c.PromptEvalDuration, c.EvalDuration
	srv.LoadDuration, srv.TotalDuration = c.LoadDuration, c.TotalDuration
	s.rec.FinishReason = c.DoneReason
	s.ended(ev.At, `"done": true`)
	return true
}

// ollamaText is what the fast path reads from a line that is not the
// last; the slices point into the line or the scanner's buffer.
type ollamaText struct {
	response, thinking, content, msgThinking []byte
}

var (
	ollamaKeys  = []string{"response", "thinking", "message", "done", "done_reason", "error", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration", "load_duration", "total_duration"}
	ollamaSlow  = ollamaKeys[5:] // present and not null: the line goes to encoding/json
	messageKeys = []string{"content", "thinking"}
)

// ollama reads a line that carries text and is not done. It returns false
// when the line is for encoding/json (the done line, errors, anything
// unusual).
func (s *jsonScan) ollama(data []byte, out *ollamaText) bool {
	s.reset(data)
	*out = ollamaText{}
	if !s.open('{') {
		return false
	}
	for first := true; ; first = false {
		key, ok := s.member(first)
		if !ok {
			break
		}
		switch k := string(key); k {
		case "response":
			s.textInto(&out.response)
		case "thinking":
			s.textInto(&out.thinking)
		case "done_reason":
			var v []byte
			s.textInto(&v)
		case "done":
			switch s.peek() {
			case 't':
				return false
			case 'f':
				s.literal("false")
			default:
				if !s.null() {
					return false
				}
			}
		case "message":
			s.message(out)
		default:
			if slices.Contains(ollamaSlow, k) {
				if !s.null() {
					return false
				}
				continue
			}
			if folded(key, ollamaKeys) {
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

func (s *jsonScan) message(out *ollamaText) {
	s.fields(messageKeys, func(key []byte) bool {
		switch string(key) {
		case "content":
			s.textInto(&out.content)
		case "thinking":
			s.textInto(&out.msgThinking)
		default:
			return false
		}
		return true
	})
}
