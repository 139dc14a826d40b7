package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// ollamaDone is the final object of an Ollama response. Durations are in
// nanoseconds of the client's time base (model time / time_scale):
// total = queue + prompt eval + eval; load is 0 (the model stays loaded).
type ollamaDone struct {
	Model              string         `json:"model"`
	CreatedAt          string         `json:"created_at"`
	Response           *string        `json:"response,omitempty"`
	Message            *ollamaMessage `json:"message,omitempty"`
	Done               bool           `json:"done"`
	DoneReason         string         `json:"done_reason"`
	TotalDuration      int64          `json:"total_duration"`
	LoadDuration       int64          `json:"load_duration"`
	PromptEvalCount    int            `json:"prompt_eval_count"`
	PromptEvalDuration int64          `json:"prompt_eval_duration"`
	EvalCount          int            `json:"eval_count"`
	EvalDuration       int64          `json:"eval_duration"`
}

type ollamaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func writeOllamaError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]string{"error": e.msg})
}

func now3339() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// ollama serves /api/chat (chat) and /api/generate as NDJSON streams (the
// default) or single objects.
func (s *Server) ollama(w http.ResponseWriter, r *http.Request, chat bool) {
	body, err := readBody(w, r)
	if err != nil {
		writeOllamaError(w, badRequest("reading the body: %v", err))
		return
	}
	g, load, aerr := parseOllama(body, chat)
	if aerr == nil {
		aerr = s.checkModel(g.model, true)
	}
	if aerr == nil && load {
		s.ollamaLoad(w, g.model, chat)
		return
	}
	s.answer(w, r, g, aerr, writeOllamaError,
		func(j *job) { s.ollamaStream(w, r, j, chat) },
		func(j *job, n int) { writeJSON(w, http.StatusOK, s.ollamaFinal(j, chat, j.fullText(n))) })
}

// ollamaLoad answers a request with no prompt the way Ollama does: it
// loads the model and reports done_reason "load".
func (s *Server) ollamaLoad(w http.ResponseWriter, model string, chat bool) {
	d := ollamaDone{Model: model, CreatedAt: now3339(), Done: true, DoneReason: "load"}
	empty := ""
	if chat {
		d.Message = &ollamaMessage{Role: "assistant"}
	} else {
		d.Response = &empty
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) ollamaFinal(j *job, chat bool, text string) ollamaDone {
	t := j.timing()
	d := ollamaDone{Model: j.g.model, CreatedAt: now3339(), Done: true, DoneReason: j.s.reason,
		TotalDuration: int64(t.E2E), PromptEvalCount: t.Prompt, PromptEvalDuration: int64(t.Prefill),
		EvalCount: t.Generated, EvalDuration: int64(t.Decode)}
	if chat {
		d.Message = &ollamaMessage{Role: "assistant", Content: text}
	} else {
		d.Response = &text
	}
	return d
}

// ollamaStream writes one JSON object per token and a final object with
// the timings; an engine failure mid-stream is an {"error": …} line.
func (s *Server) ollamaStream(w http.ResponseWriter, r *http.Request, j *job, chat bool) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	model, _ := json.Marshal(j.g.model)
	s.stream(w, r, j, nil, func(buf []byte, avail int, done bool, err error) []byte {
		at := now3339()
		for j.emitted < avail {
			word := j.word()
			if chat {
				buf = fmt.Appendf(buf, `{"model":%s,"created_at":%q,"message":{"role":"assistant","content":%q},"done":false}`+"\n", model, at, word)
			} else {
				buf = fmt.Appendf(buf, `{"model":%s,"created_at":%q,"response":%q,"done":false}`+"\n", model, at, word)
			}
		}
		if err != nil {
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			buf = append(append(buf, b...), '\n')
		} else if done {
			b, _ := json.Marshal(s.ollamaFinal(j, chat, ""))
			buf = append(append(buf, b...), '\n')
		}
		return buf
	})
}

// ollamaModel is the model as /api/tags and /api/ps list it.
func (s *Server) ollamaModel() map[string]any {
	c := s.cfg
	return map[string]any{
		"name": c.Model.Name + ":latest", "model": c.Model.Name + ":latest",
		"modified_at": time.Unix(s.created, 0).UTC().Format(time.RFC3339),
		"size":        int64(c.WeightBytes()), "digest": fmt.Sprintf("%064x", uint64(c.Seed)),
		"details": map[string]any{"format": "gguf", "family": "llama", "families": []string{"llama"},
			"parameter_size":     fmt.Sprintf("%.1fB", c.Model.Params/1e9),
			"quantization_level": quantName(c.Model.BytesPerWeight)},
	}
}

func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{s.ollamaModel()}})
}

func (s *Server) ollamaPS(w http.ResponseWriter, r *http.Request) {
	m := s.ollamaModel()
	m["size_vram"] = m["size"]
	m["expires_at"] = time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	m["context_length"] = s.cfg.EffectiveMaxModelLen()
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{m}})
}

func quantName(bytesPerWeight float64) string {
	switch bytesPerWeight {
	case 2:
		return "BF16"
	case 1:
		return "Q8_0"
	case 0.5:
		return "Q4_0"
	}
	return fmt.Sprintf("%g bytes/weight", bytesPerWeight)
}
