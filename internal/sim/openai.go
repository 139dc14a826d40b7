package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// openAI serves /v1/chat/completions (chat) and /v1/completions.
func (s *Server) openAI(w http.ResponseWriter, r *http.Request, chat bool) {
	body, err := readBody(w, r)
	if err != nil {
		writeOpenAIError(w, badRequest("reading the body: %v", err))
		return
	}
	g, aerr := parseOpenAI(body, chat)
	if aerr == nil {
		aerr = s.checkModel(g.model, false)
	}
	s.answer(w, r, g, aerr, writeOpenAIError,
		func(j *job) { s.openAIStream(w, r, j, s.newChunker(j, chat)) },
		func(j *job, n int) {
			writeJSON(w, http.StatusOK, s.newChunker(j, chat).whole(j.fullText(n), n, j.cached()))
		})
}

// checkModel accepts an empty name (the served model, as vLLM does), the
// served name, and for Ollama the name with a ":latest" tag.
func (s *Server) checkModel(name string, ollama bool) *apiError {
	if name == "" || name == s.cfg.Model.Name || (ollama && name == s.cfg.Model.Name+":latest") {
		return nil
	}
	if ollama {
		return &apiError{status: http.StatusNotFound, msg: "model \"" + name + "\" not found, try pulling it first"}
	}
	return &apiError{status: http.StatusNotFound, typ: "NotFoundError", msg: "The model `" + name + "` does not exist."}
}

func serverError(err error) *apiError {
	return &apiError{status: http.StatusInternalServerError, typ: "InternalServerError", msg: err.Error()}
}

type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	} `json:"error"`
}

func newOpenAIError(e *apiError) openAIError {
	var o openAIError
	o.Error.Message, o.Error.Type, o.Error.Code = e.msg, e.typ, e.status
	return o
}

func writeOpenAIError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, newOpenAIError(e))
}

// openAIStream streams SSE chunks: for chat a role-only chunk at once, then
// one chunk per token (the last carrying finish_reason), an optional
// usage-only chunk, and [DONE]. A request failed by the engine after the
// stream began gets an error event before [DONE].
func (s *Server) openAIStream(w http.ResponseWriter, r *http.Request, j *job, f *chunker) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 0, 4096)
	if f.chat {
		buf = f.role(buf)
	}
	s.stream(w, r, j, buf, func(buf []byte, avail int, done bool, err error) []byte {
		for j.emitted < avail {
			last := done && err == nil && j.emitted+1 == avail
			buf = f.token(buf, j.word(), last)
		}
		if err != nil {
			b, _ := json.Marshal(newOpenAIError(serverError(err)))
			buf = append(append(append(buf, "data: "...), b...), "\n\n"...)
		} else if done && j.g.includeUsage {
			buf = f.usage(buf, avail, j.cached())
		}
		if done {
			buf = append(buf, "data: [DONE]\n\n"...)
		}
		return buf
	})
}

// chunker renders a request's SSE chunks from precomputed JSON fragments:
// a stream can carry thousands of chunks a second.
type chunker struct {
	chat   bool
	prompt int
	reason string
	head   string // `{"id":…,"model":…,` shared by every chunk and the reply
	id     string
	s      *Server
}

func (s *Server) newChunker(j *job, chat bool) *chunker {
	model, _ := json.Marshal(s.cfg.Model.Name)
	id, object := "cmpl-", "text_completion"
	if chat {
		id, object = "chatcmpl-", "chat.completion.chunk"
	}
	id += strconv.FormatUint(j.id, 10)
	head := `{"id":"` + id + `","object":"` + object + `","created":` +
		strconv.FormatInt(s.created, 10) + `,"model":` + string(model) + `,`
	return &chunker{chat: chat, prompt: j.g.prompt, reason: j.s.reason, head: head, id: id, s: s}
}

func (f *chunker) role(b []byte) []byte {
	b = append(b, "data: "...)
	b = append(b, f.head...)
	return append(b, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

// token appends one token's chunk. Words are plain ASCII letters and a
// space, so they need no JSON escaping.
func (f *chunker) token(b []byte, word string, last bool) []byte {
	b = append(b, "data: "...)
	b = append(b, f.head...)
	if f.chat {
		b = append(b, `"choices":[{"index":0,"delta":{"content":"`...)
		b = append(b, word...)
		b = append(b, `"},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":"`...)
		b = append(b, word...)
		b = append(b, `","logprobs":null,"finish_reason":`...)
	}
	if last {
		b = append(append(append(b, '"'), f.reason...), '"')
	} else {
		b = append(b, "null"...)
	}
	if !f.chat {
		b = append(b, `,"stop_reason":null`...)
	}
	return append(b, "}]}\n\n"...)
}

func (f *chunker) usage(b []byte, completion, cached int) []byte {
	u, _ := json.Marshal(newUsage(f.prompt, completion, cached))
	b = append(b, "data: "...)
	b = append(b, f.head...)
	b = append(b, `"choices":[],"usage":`...)
	b = append(b, u...)
	return append(b, "}\n\n"...)
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// PromptTokensDetails is sent, as vLLM sends it, only when some of
	// the prompt was found in the prefix cache.
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func newUsage(prompt, completion, cached int) usage {
	u := usage{PromptTokens: prompt, TotalTokens: prompt + completion, CompletionTokens: completion}
	if cached > 0 {
		u.PromptTokensDetails = &promptTokensDetails{CachedTokens: cached}
	}
	return u
}

// whole is a non-streaming response.
func (f *chunker) whole(text string, n, cached int) any {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	choice := map[string]any{"index": 0, "logprobs": nil, "finish_reason": f.reason}
	object := "text_completion"
	if f.chat {
		choice["message"] = message{"assistant", text}
		object = "chat.completion"
	} else {
		choice["text"] = text
		choice["stop_reason"] = nil
	}
	return map[string]any{"id": f.id, "object": object, "created": f.s.created,
		"model": f.s.cfg.Model.Name, "choices": []any{choice},
		"usage": newUsage(f.prompt, n, cached)}
}

// models serves /v1/models.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": s.cfg.Model.Name, "object": "model", "created": s.created, "owned_by": "servebench-sim",
		"root": s.cfg.Model.Name, "parent": nil, "max_model_len": s.cfg.EffectiveMaxModelLen(),
	}}})
}

// tokenize serves vLLM's POST /tokenize: {prompt} or {messages} →
// {count, max_model_len, tokens}.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	var req struct {
		Model               string        `json:"model"`
		Prompt              *string       `json:"prompt"`
		Messages            []chatMessage `json:"messages"`
		AddSpecialTokens    *bool         `json:"add_special_tokens"`
		AddGenerationPrompt *bool         `json:"add_generation_prompt"`
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err == nil && req.Prompt == nil && req.Messages == nil {
		err = errors.New("one of prompt or messages is required")
	}
	if err != nil {
		writeOpenAIError(w, badRequest("%v", err))
		return
	}
	if aerr := s.checkModel(req.Model, false); aerr != nil {
		writeOpenAIError(w, aerr)
		return
	}
	ids := []int{}
	if req.Prompt != nil {
		if req.AddSpecialTokens == nil || *req.AddSpecialTokens {
			ids = append(ids, specialIDBase)
		}
		ids = wordIDs(ids, *req.Prompt)
	} else {
		ids = chatIDs(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(ids),
		"max_model_len": s.cfg.EffectiveMaxModelLen(), "tokens": ids, "token_strs": nil})
}

// detokenize serves vLLM's POST /detokenize: {tokens} → {prompt}. Words
// outside the generator's vocabulary do not round-trip.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		writeOpenAIError(w, badRequest("%v", err))
		return
	}
	b := make([]byte, 0, 8*len(req.Tokens))
	for i, id := range req.Tokens {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, idText(id)...)
	}
	writeJSON(w, http.StatusOK, map[string]string{"prompt": string(b)})
}
