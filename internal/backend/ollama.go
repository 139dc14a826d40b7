package backend

import (
	"encoding/json"

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
// timing fields come only in the last line, the one with done: true. Its
// json tags are the key tables below.
type ollamaChunk struct {
	Response   string          `json:"response"`
	Thinking   string          `json:"thinking"`
	Message    ollamaMessage   `json:"message"`
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

type ollamaMessage struct {
	Content  string `json:"content"`
	Thinking string `json:"thinking"`
}

// The members of ollamaChunk and ollamaMessage, for the scanner.
const (
	olResponse = iota
	olThinking
	olMessage
	olDone
	olDoneReason
	olError
	olPromptEvalCount
	olPromptEvalDuration
	olEvalCount
	olEvalDuration
	olLoadDuration
	olTotalDuration
)

const (
	messageContent = iota
	messageThinking
)

var (
	ollamaKeys = keys{olResponse: "response", olThinking: "thinking", olMessage: "message", olDone: "done",
		olDoneReason: "done_reason", olError: "error", olPromptEvalCount: "prompt_eval_count",
		olPromptEvalDuration: "prompt_eval_duration", olEvalCount: "eval_count", olEvalDuration: "eval_duration",
		olLoadDuration: "load_duration", olTotalDuration: "total_duration"}
	messageKeys = keys{messageContent: "content", messageThinking: "thinking"}
)

// ollamaDecoder reads Ollama's lines: those that carry text with the
// allocation-free scanner, the last one and errors with encoding/json.
type ollamaDecoder struct {
	scan jsonScan
	fast ollamaText
	slow ollamaChunk
	// joined holds texts the fast path joins (message and top level).
	joined []byte
}

func (d *ollamaDecoder) reset() {
	d.slow, d.fast, d.joined = ollamaChunk{}, ollamaText{}, d.joined[:0]
}

// event handles one line; it reports whether the stream is over.
func (d *ollamaDecoder) event(s *stream, ev sse.Event, truncated bool) bool {
	d.joined = d.joined[:0]
	if f := &d.fast; d.scan.ollama(ev.Data, f) {
		s.add(ev.At, join(&d.joined, f.content, f.response), join(&d.joined, f.msgThinking, f.thinking))
		return false
	}
	c := &d.slow
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
	s.ended(ev.At)
	return true
}

// ollamaText is what the fast path reads from a line that is not the
// last; the slices point into the line or the scanner's buffer.
type ollamaText struct {
	response, thinking, content, msgThinking []byte
}

// ollama reads a line that carries text and is not done. It returns false
// when the line is for encoding/json (the done line, errors, anything
// unusual).
func (s *jsonScan) ollama(data []byte, out *ollamaText) bool {
	s.reset(data)
	*out = ollamaText{}
	if !s.open('{') {
		return false
	}
	for first := true; !s.bad; first = false {
		key, ok := s.member(first)
		if !ok {
			break
		}
		switch ollamaKeys.find(key) {
		case keyFolded:
			return false
		case keyUnknown:
			s.skip()
		case olResponse:
			s.textInto(&out.response)
		case olThinking:
			s.textInto(&out.thinking)
		case olDoneReason:
			var v []byte
			s.textInto(&v)
		case olDone:
			switch s.peek() {
			case 't':
				return false // the last line, for encoding/json
			case 'f':
				s.literal("false")
			default:
				s.zero()
			}
		case olMessage:
			s.message(out)
		default:
			s.zero()
		}
	}
	return s.end()
}

func (s *jsonScan) message(out *ollamaText) {
	s.fields(messageKeys, func(k int) bool {
		switch k {
		case messageContent:
			s.textInto(&out.content)
		case messageThinking:
			s.textInto(&out.msgThinking)
		default:
			return false
		}
		return true
	})
}
