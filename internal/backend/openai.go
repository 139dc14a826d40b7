package backend

import (
	"bytes"
	"cmp"
	"encoding/json"

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
// both chat (delta) and completions (text). Its json tags are the key
// tables below.
type openAIChunk struct {
	Choices []openAIChoice  `json:"choices"`
	Usage   *openAIUsage    `json:"usage"`
	Timings *llamaTimings   `json:"timings"`
	Error   json.RawMessage `json:"error"`
	// Older vLLM streams errors as {"object": "error", "message": ...}.
	Object  string `json:"object"`
	Message string `json:"message"`
}

type openAIChoice struct {
	Text         string      `json:"text"`
	Delta        openAIDelta `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

type openAIDelta struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
}

// The members of openAIChunk, openAIChoice and openAIDelta, for the
// scanner: one table per object, indexed by these constants.
const (
	oaChoices = iota
	oaUsage
	oaTimings
	oaError
	oaObject
	oaMessage
)

const (
	choiceText = iota
	choiceDelta
	choiceFinish
)

const (
	deltaContent = iota
	deltaReasoningContent
	deltaReasoning
)

const (
	usagePrompt = iota
	usageCompletion
	usagePromptDetails
	usageCompletionDetails
)

var (
	usageKeys             = keys{usagePrompt: "prompt_tokens", usageCompletion: "completion_tokens", usagePromptDetails: "prompt_tokens_details", usageCompletionDetails: "completion_tokens_details"}
	promptDetailsKeys     = keys{"cached_tokens"}
	completionDetailsKeys = keys{"reasoning_tokens"}
	openAIKeys            = keys{oaChoices: "choices", oaUsage: "usage", oaTimings: "timings", oaError: "error",
		oaObject: "object", oaMessage: "message"}
	choiceKeys = keys{choiceText: "text", choiceDelta: "delta", choiceFinish: "finish_reason"}
	deltaKeys  = keys{deltaContent: "content", deltaReasoningContent: "reasoning_content", deltaReasoning: "reasoning"}
)

type openAIUsage struct {
	PromptTokens            *int                     `json:"prompt_tokens"`
	CompletionTokens        *int                     `json:"completion_tokens"`
	PromptTokensDetails     *openAIPromptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails *openAICompletionDetails `json:"completion_tokens_details"`
}

type openAIPromptDetails struct {
	CachedTokens *int `json:"cached_tokens"`
}

type openAICompletionDetails struct {
	ReasoningTokens *int `json:"reasoning_tokens"`
}

// usageCounts is a usage object as both paths read it: a count is had
// when the member was there and not null.
type usageCounts struct {
	prompt, completion, reasoning, cached             int
	hasPrompt, hasCompletion, hasReasoning, hasCached bool
}

// counts flattens u the way the fast path reads a usage object.
func (u *openAIUsage) counts() usageCounts {
	var c usageCounts
	if u.PromptTokens != nil {
		c.prompt, c.hasPrompt = *u.PromptTokens, true
	}
	if u.CompletionTokens != nil {
		c.completion, c.hasCompletion = *u.CompletionTokens, true
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		c.cached, c.hasCached = *d.CachedTokens, true
	}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
		c.reasoning, c.hasReasoning = *d.ReasoningTokens, true
	}
	return c
}

// llamaTimings is llama.cpp server's per-response timing report.
type llamaTimings struct {
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
	CacheN      *int    `json:"cache_n"`
}

// reset empties c for the next chunk. encoding/json decodes into the
// existing slice elements without zeroing them, so they are cleared here.
func (c *openAIChunk) reset() {
	ch := c.Choices[:cap(c.Choices)]
	clear(ch)
	*c = openAIChunk{Choices: ch[:0]}
}

var doneMarker = []byte("[DONE]")

// openAIDecoder reads the chunks of both OpenAI APIs: ordinary chunks with
// the allocation-free scanner (or, when only the text changed, by pattern),
// the rest (usage, timings, errors, whatever
// the scanner declines) with encoding/json.
type openAIDecoder struct {
	scan jsonScan
	fast openAIText
	slow openAIChunk
	// repeat reads chunks that differ from the last one only in their text.
	repeat repeatChunk
	// joined holds texts the fast path joins (text and delta.content).
	joined []byte
}

func (d *openAIDecoder) reset() {
	d.slow.reset()
	d.fast, d.joined = openAIText{}, d.joined[:0]
	d.repeat.ok = false
}

// event handles one event; it reports whether the stream is over.
func (d *openAIDecoder) event(s *stream, ev sse.Event, truncated bool) bool {
	data := bytes.TrimSpace(ev.Data)
	switch {
	case ev.Event == "error":
		s.serverError(ev.At, sseErrorText(s.c.redactBytes(data)))
		return true
	case bytes.Equal(data, doneMarker):
		s.ended(ev.At)
		return true
	case len(data) == 0:
		return false
	}
	d.joined = d.joined[:0]
	f := &d.fast
	repeated := d.repeat.match(data, f)
	if repeated || d.scan.openAI(data, f) {
		if !repeated {
			d.repeat.learn(data, f)
		}
		if f.usage {
			s.openAIUsage(f.counts)
		}
		if len(f.finish) > 0 && string(f.finish) != s.rec.FinishReason {
			s.rec.FinishReason = string(f.finish)
		}
		if f.choice {
			s.add(ev.At, join(&d.joined, f.text, f.content), firstNonEmpty(f.reasoningContent, f.reasoning))
		}
		return false
	}
	return d.decodeSlow(s, ev, data, truncated)
}

// decodeSlow decodes a chunk with encoding/json: chunks with timings or
// an error, and whatever the fast path declines.
func (d *openAIDecoder) decodeSlow(s *stream, ev sse.Event, data []byte, truncated bool) bool {
	c := &d.slow
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
		s.openAIUsage(c.Usage.counts())
	}
	if t := c.Timings; t != nil {
		s.llamaTimings(t)
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

func (s *stream) openAIUsage(u usageCounts) {
	if u.hasPrompt && u.prompt > 0 {
		s.prompt, s.hasPrompt = u.prompt, true
	}
	if u.hasCompletion {
		s.output, s.hasOutput = u.completion, true
	}
	// vLLM and SGLang leave prompt_tokens_details out when nothing was
	// cached; OpenAI sends 0. A 0 sent is kept as reported (metrics).
	if u.hasCached {
		s.server().CachedTokens = new(u.cached)
	}
	if u.hasReasoning {
		s.reasoning, s.hasReasoning = u.reasoning, true
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
	usage                                              bool // a usage object, not null, was read into counts
	counts                                             usageCounts
}

// openAI reads an ordinary chunk: choices and usage, and no timings or
// error. It returns false when the chunk is for encoding/json.
func (s *jsonScan) openAI(data []byte, out *openAIText) bool {
	s.reset(data)
	*out = openAIText{}
	if !s.open('{') {
		return false
	}
	seenChoices, seenUsage := false, false
	for first := true; !s.bad; first = false {
		key, ok := s.member(first)
		if !ok {
			break
		}
		switch openAIKeys.find(key) {
		case keyFolded:
			return false
		case keyUnknown:
			s.skip()
		case oaChoices:
			if seenChoices {
				return false // encoding/json reuses elements: not worth copying
			}
			seenChoices = true
			s.choices(out)
		case oaUsage:
			if seenUsage {
				return false // encoding/json merges the second into the first
			}
			seenUsage = true
			s.usage(out)
		case oaObject:
			var v []byte
			if s.textInto(&v); string(v) == "error" {
				return false
			}
		case oaMessage:
			var v []byte
			s.textInto(&v)
		default:
			s.zero()
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

// usage reads a usage object as encoding/json reads it into openAIUsage.
// A member given twice, at any depth, is for encoding/json, which merges.
func (s *jsonScan) usage(out *openAIText) {
	if s.null() {
		return
	}
	out.usage = true
	c := &out.counts
	var seen [4]bool
	s.fields(usageKeys, func(k int) bool {
		if seen[k] {
			s.bad = true
			return true
		}
		seen[k] = true
		switch k {
		case usagePrompt:
			c.hasPrompt = s.countInto(&c.prompt)
		case usageCompletion:
			c.hasCompletion = s.countInto(&c.completion)
		case usagePromptDetails:
			s.once(promptDetailsKeys, func() { c.hasCached = s.countInto(&c.cached) })
		case usageCompletionDetails:
			s.once(completionDetailsKeys, func() { c.hasReasoning = s.countInto(&c.reasoning) })
		}
		return true
	})
}

// once reads an object (or null) of one known member, handing it to read;
// the member given twice is for encoding/json.
func (s *jsonScan) once(ks keys, read func()) {
	n := 0
	s.fields(ks, func(int) bool {
		if n++; n > 1 {
			s.bad = true
			return true
		}
		read()
		return true
	})
}

// countInto reads an integer into *dst as encoding/json would into an int
// (or *int) field; it reports false for null, which leaves *dst as it is.
// A fraction, an exponent or more than 18 digits is for encoding/json.
func (s *jsonScan) countInto(dst *int) bool {
	if s.null() {
		return false
	}
	start := s.i
	s.number()
	if s.bad {
		return false
	}
	b := s.b[start:s.i]
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 18 {
		s.bad = true
		return false
	}
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			s.bad = true
			return false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

func (s *jsonScan) choice(out *openAIText) {
	s.fields(choiceKeys, func(k int) bool {
		switch k {
		case choiceText:
			s.textInto(&out.text)
		case choiceFinish:
			s.textInto(&out.finish)
		case choiceDelta:
			s.delta(out)
		default:
			return false
		}
		return true
	})
}

func (s *jsonScan) delta(out *openAIText) {
	s.fields(deltaKeys, func(k int) bool {
		switch k {
		case deltaContent:
			s.textInto(&out.content)
		case deltaReasoningContent:
			s.textInto(&out.reasoningContent)
		case deltaReasoning:
			s.textInto(&out.reasoning)
		default:
			return false
		}
		return true
	})
}
