package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// genRequest is a generation request from any API, reduced to what the
// engine needs.
type genRequest struct {
	model        string
	prompt       int  // prompt tokens
	maxTokens    int  // 0: the API's default
	minTokens    int  //
	ignoreEOS    bool //
	seed         *int64
	stream       bool
	includeUsage bool
	chat         bool // chat API: unset max_tokens means "up to max_model_len"
	// ids gives the prompt's token ids, for the prefix cache: computed
	// only when the cache is on.
	ids func() []int
}

// apiError is an error answered before generation starts.
type apiError struct {
	status int
	typ    string // OpenAI error type
	msg    string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "BadRequestError", msg: fmt.Sprintf(format, args...)}
}

// openAIRequest is the union of the chat and completions request fields the
// simulator reads; others are accepted and ignored.
type openAIRequest struct {
	Model         string          `json:"model"`
	Messages      []chatMessage   `json:"messages"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int   `json:"max_tokens"`
	MaxCompletionTokens *int   `json:"max_completion_tokens"`
	MinTokens           int    `json:"min_tokens"`
	IgnoreEOS           bool   `json:"ignore_eos"`
	Seed                *int64 `json:"seed"`
	N                   *int   `json:"n"`
}

// parseOpenAI parses a /v1/chat/completions (chat) or /v1/completions body.
func parseOpenAI(body []byte, chat bool) (genRequest, *apiError) {
	var r openAIRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return genRequest{}, badRequest("invalid JSON body: %v", err)
	}
	g := genRequest{model: r.Model, minTokens: r.MinTokens, ignoreEOS: r.IgnoreEOS,
		seed: r.Seed, stream: r.Stream, chat: chat}
	g.includeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage
	if r.N != nil && *r.N != 1 {
		return g, badRequest("n = %d is not supported by the simulator: only n = 1", *r.N)
	}
	mt := r.MaxTokens
	if r.MaxCompletionTokens != nil {
		mt = r.MaxCompletionTokens
	}
	if mt != nil {
		if *mt < 1 {
			return g, badRequest("max_tokens must be at least 1, got %d.", *mt)
		}
		g.maxTokens = *mt
	}
	if g.minTokens < 0 || (g.maxTokens > 0 && g.minTokens > g.maxTokens) {
		return g, badRequest("min_tokens must be in [0, max_tokens], got %d.", g.minTokens)
	}
	var err *apiError
	if chat {
		if len(r.Messages) == 0 {
			return g, badRequest("messages must be a non-empty list")
		}
		g.prompt = chatTokens(r.Messages)
		g.ids = func() []int { return chatIDs(r.Messages, true) }
	} else {
		g.prompt, err = promptTokens(r.Prompt)
		g.ids = func() []int { return promptIDs(r.Prompt) }
	}
	return g, err
}

// promptTokens counts a completions prompt: a string, a one-string list, a
// list of token ids or a one-list list of them.
func promptTokens(raw json.RawMessage) (int, *apiError) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return bosTokens + countWords(s), nil
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil && len(strs) == 1 {
		return bosTokens + countWords(strs[0]), nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return len(ids), nil
	}
	var batch [][]int
	if json.Unmarshal(raw, &batch) == nil && len(batch) == 1 && len(batch[0]) > 0 {
		return len(batch[0]), nil
	}
	return 0, badRequest("prompt must be a string or a list of token ids (batches of prompts are not supported by the simulator)")
}

// promptIDs are the token ids of a completions prompt promptTokens
// counts.
func promptIDs(raw json.RawMessage) []int {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return wordIDs([]int{specialIDBase}, s)
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil && len(strs) == 1 {
		return wordIDs([]int{specialIDBase}, strs[0])
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		return ids
	}
	var batch [][]int
	if json.Unmarshal(raw, &batch) == nil && len(batch) == 1 {
		return batch[0]
	}
	return nil
}

// ollamaRequest is the union of /api/generate and /api/chat bodies.
type ollamaRequest struct {
	Model    string        `json:"model"`
	Prompt   string        `json:"prompt"`
	System   string        `json:"system"`
	Raw      bool          `json:"raw"`
	Messages []chatMessage `json:"messages"`
	Stream   *bool         `json:"stream"`
	Options  struct {
		NumPredict *int   `json:"num_predict"`
		Seed       *int64 `json:"seed"`
	} `json:"options"`
}

// parseOllama parses an /api/chat (chat) or /api/generate body. load is
// true for a request with nothing to generate from, which Ollama answers
// by loading the model.
func parseOllama(body []byte, chat bool) (g genRequest, load bool, err *apiError) {
	var r ollamaRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return g, false, badRequest("invalid JSON body: %v", err)
	}
	g = genRequest{model: r.Model, seed: r.Options.Seed, stream: r.Stream == nil || *r.Stream, chat: true}
	if r.Model == "" {
		return g, false, badRequest("model is required")
	}
	if n := r.Options.NumPredict; n != nil && *n > 0 {
		g.maxTokens = *n
	}
	switch {
	case chat && len(r.Messages) == 0, !chat && r.Prompt == "":
		return g, true, nil
	case chat:
		g.prompt = chatTokens(r.Messages)
		g.ids = func() []int { return chatIDs(r.Messages, true) }
	case r.Raw:
		g.prompt = bosTokens + countWords(r.Prompt)
		g.ids = func() []int { return wordIDs([]int{specialIDBase}, r.Prompt) }
	default:
		msgs := []chatMessage{{Role: "user", Content: jsonString(r.Prompt)}}
		if r.System != "" {
			msgs = append([]chatMessage{{Role: "system", Content: jsonString(r.System)}}, msgs...)
		}
		g.prompt = chatTokens(msgs)
		g.ids = func() []int { return chatIDs(msgs, true) }
	}
	return g, false, nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// defaultCompletionMaxTokens is vLLM's max_tokens default for /v1/completions.
const defaultCompletionMaxTokens = 16

// plan decides how many tokens a request generates and why it stops: the
// engine knows its output length up front, as if it sampled EOS there.
func (g genRequest) plan(maxModelLen int, tg *textGen, eosMean float64) (target int, reason string, err *apiError) {
	limit := g.maxTokens
	if limit == 0 {
		limit = maxModelLen - g.prompt
		if !g.chat {
			limit = defaultCompletionMaxTokens
		}
	}
	if g.prompt >= maxModelLen || g.prompt+limit > maxModelLen {
		return 0, "", badRequest("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			maxModelLen, g.prompt+limit, g.prompt, limit)
	}
	if g.ignoreEOS {
		return limit, reasonLength, nil
	}
	n := max(tg.naturalLength(eosMean), g.minTokens)
	if n < limit {
		return n, reasonStop, nil
	}
	return limit, reasonLength, nil
}
