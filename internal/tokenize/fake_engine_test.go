package tokenize

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeEngine imitates one engine's /tokenize with a whitespace tokenizer:
// each word is one token (or cost(word)), plus a BOS when asked for special
// tokens and bos is set.
type fakeEngine struct {
	shape    Shape
	bos      bool
	maxLen   int
	model    string           // vLLM: the only model name accepted
	template int              // vLLM: tokens the chat template adds
	cost     func(string) int // tokens per word; nil means one
	calls    atomic.Int64
}

func (f *fakeEngine) count(text string, special bool) int {
	n := 0
	for _, w := range strings.Fields(text) {
		if f.cost != nil {
			n += f.cost(w)
		} else {
			n++
		}
	}
	if special && f.bos {
		n++
	}
	return n
}

func (f *fakeEngine) start(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}

func ids(n int) []int { return make([]int, n) }

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.shape == "" || (r.URL.Path != "/tokenize" && r.URL.Path != "/props" && r.URL.Path != "/info") {
		http.NotFound(w, r) // Ollama, or a path this engine lacks
		return
	}
	if r.URL.Path != "/tokenize" {
		f.info(w, r)
		return
	}
	f.calls.Add(1)
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	special, _ := body["add_special_tokens"].(bool)
	switch f.shape {
	case ShapeVLLM, ShapeSGLang:
		if m, _ := body["model"].(string); f.model != "" && m != f.model {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"object": "error", "message": "The model `" + m + "` does not exist."})
			return
		}
		n, ok := f.openAICount(body, special)
		if !ok {
			http.Error(w, `{"detail":"field required: prompt"}`, http.StatusUnprocessableEntity)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"count": n, "max_model_len": f.maxLen, "tokens": ids(n)})
	case ShapeLlamaCpp:
		content, ok := body["content"].(string)
		if !ok {
			json.NewEncoder(w).Encode(map[string]any{"tokens": []int{}}) // llama.cpp ignores other fields
			return
		}
		special, _ = body["add_special"].(bool)
		json.NewEncoder(w).Encode(map[string]any{"tokens": ids(f.count(content, special))})
	case ShapeTGI:
		inputs, _ := body["inputs"].(string)
		if inputs == "" {
			http.Error(w, `{"error":"Input validation error: inputs cannot be empty"}`, http.StatusUnprocessableEntity)
			return
		}
		out := []map[string]any{}
		for range f.count(inputs, true) {
			out = append(out, map[string]any{"id": 1, "text": "x", "start": 0, "stop": 1})
		}
		json.NewEncoder(w).Encode(out)
	}
}

func (f *fakeEngine) openAICount(body map[string]any, special bool) (int, bool) {
	if msgs, ok := body["messages"].([]any); ok {
		if f.shape != ShapeVLLM {
			return 0, false
		}
		n := f.template
		for _, m := range msgs {
			content, _ := m.(map[string]any)["content"].(string)
			n += f.count(content, false)
		}
		return n, true
	}
	prompt, ok := body["prompt"].(string)
	return f.count(prompt, special), ok
}

func (f *fakeEngine) info(w http.ResponseWriter, r *http.Request) {
	switch {
	case f.shape == ShapeLlamaCpp && r.URL.Path == "/props":
		json.NewEncoder(w).Encode(map[string]any{"default_generation_settings": map[string]any{"n_ctx": f.maxLen}})
	case f.shape == ShapeTGI && r.URL.Path == "/info":
		json.NewEncoder(w).Encode(map[string]any{"model_id": "m", "max_input_tokens": f.maxLen})
	default:
		http.NotFound(w, r)
	}
}
