package backend

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// fakeServer answers the given paths with JSON bodies; everything else is
// 404, as on a server without that endpoint.
func fakeServer(t *testing.T, answers map[string]any) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDescribe(t *testing.T) {
	models := func(owner string, extra map[string]any) map[string]any {
		e := map[string]any{"id": "m", "object": "model", "owned_by": owner}
		for k, v := range extra {
			e[k] = v
		}
		return map[string]any{"object": "list", "data": []any{map[string]any{"id": "other"}, e}}
	}
	tests := []struct {
		name    string
		answers map[string]any
		want    map[record.ServerKey]string
	}{
		{"vllm", map[string]any{
			"GET /v1/models": models("vllm", map[string]any{"root": "meta-llama/Llama-3.1-8B", "max_model_len": 8192}),
			"GET /version":   map[string]any{"version": "0.6.3"},
		}, map[record.ServerKey]string{record.ServerRuntime: "vllm", record.ServerRuntimeVersion: "0.6.3", record.ServerModelID: "m",
			record.ServerModelRoot: "meta-llama/Llama-3.1-8B", record.ServerMaxModelLen: "8192", record.ServerEndpoints: "/v1/models,/version"}},
		{"tgi", map[string]any{
			"GET /info": map[string]any{"model_id": "bigscience/bloom", "model_sha": "abc123", "model_dtype": "torch.float16",
				"max_total_tokens": 4096, "version": "2.0.1"},
		}, map[record.ServerKey]string{record.ServerRuntime: "tgi", record.ServerRuntimeVersion: "2.0.1", record.ServerModelID: "bigscience/bloom",
			record.ServerModelRevision: "abc123", record.ServerQuantization: "torch.float16", record.ServerMaxModelLen: "4096"}},
		{"llama.cpp", map[string]any{
			"GET /v1/models": models("llamacpp", nil),
			"GET /props": map[string]any{"build_info": "b4000-abcdef", "model_path": "/models/q4.gguf", "total_slots": 4,
				"default_generation_settings": map[string]any{"n_ctx": 2048, "params": map[string]any{"temperature": 0.8, "top_k": 40}}},
		}, map[record.ServerKey]string{record.ServerRuntime: "llama.cpp", record.ServerRuntimeVersion: "b4000-abcdef", record.ServerModelRoot: "/models/q4.gguf",
			record.ServerMaxModelLen: "2048", record.ServerSlots: "4", "sampling.temperature": "0.8", "sampling.top_k": "40"}},
		{"ollama", map[string]any{
			"GET /v1/models":   models("library", nil),
			"GET /api/version": map[string]any{"version": "0.5.7"},
			"POST /api/show": map[string]any{"details": map[string]any{"quantization_level": "Q4_K_M"},
				"model_info": map[string]any{"llama.context_length": 131072},
				"parameters": "num_ctx 4096\ntemperature 0.6\nstop \"<|eot|>\""},
		}, map[record.ServerKey]string{record.ServerRuntime: "ollama", record.ServerRuntimeVersion: "0.5.7", record.ServerQuantization: "Q4_K_M",
			record.ServerMaxModelLen: "4096", "model_context_length": "131072", "sampling.temperature": "0.6"}},
		{"nothing", map[string]any{}, map[record.ServerKey]string{}},
	}
	for _, tt := range tests {
		got := Describe(context.Background(), mustTarget(t, TargetOptions{URL: fakeServer(t, tt.answers) + "/v1/"}), "m")
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", tt.name, k, got[k], v, got)
			}
		}
		if len(tt.want) == 0 && len(got) != 0 {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
}

// TestDescribeBounded: a server that never answers costs a bounded wait.
func TestDescribeBounded(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := Describe(ctx, mustTarget(t, TargetOptions{URL: srv.URL, APIKey: "x"}), "m")
	if time.Since(start) > 5*time.Second || len(got) != 0 {
		t.Errorf("took %v, got %v", time.Since(start), got)
	}
}

// TestDescribeTimeScale: a simulator announcing its speed-up in a response
// header is recorded as such, so its figures can be put in model time.
func TestDescribeTimeScale(t *testing.T) {
	for _, tt := range []struct{ header, want string }{
		{"10", "10"}, {"2.5", "2.5"}, {"", ""}, {"fast", ""}, {"-1", ""}, {"0", ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tt.header != "" {
				w.Header().Set(TimeScaleHeader, tt.header)
			}
			json.NewEncoder(w).Encode(map[string]any{"version": "x"})
		}))
		got := Describe(context.Background(), mustTarget(t, TargetOptions{URL: srv.URL}), "m")[record.ServerTimeScale]
		srv.Close()
		if got != tt.want {
			t.Errorf("header %q: time_scale %q, want %q", tt.header, got, tt.want)
		}
	}
}
