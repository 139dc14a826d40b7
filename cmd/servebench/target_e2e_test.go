package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// targetServer is an OpenAI-compatible server whose tokenizer counts
// words plus a BOS, with vLLM's /tokenize (prompts only, as SGLang's), a
// model list, and streaming completions whose usage counts the
// prompt with that same tokenizer. It counts what it was sent.
type targetServer struct {
	models      []string // served names; nil: /v1/models answers 404
	completions atomic.Int64
}

func targetWords(s string) int { return len(strings.Fields(s)) + 1 }

func (s *targetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method + " " + r.URL.Path {
	case "GET /v1/models":
		if s.models == nil {
			http.NotFound(w, r)
			return
		}
		var data []map[string]string
		for _, m := range s.models {
			data = append(data, map[string]string{"id": m, "object": "model"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case "POST /tokenize":
		var req struct {
			Prompt *string `json:"prompt"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Prompt == nil {
			http.Error(w, `{"error":"prompt required"}`, http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"count":%d,"max_model_len":4096}`, targetWords(*req.Prompt))
	case "POST /v1/completions":
		s.completions.Add(1)
		var req struct {
			Prompt string `json:"prompt"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		prompt := targetWords(req.Prompt)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t%d\"}]}\n\n", i)
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n", prompt)
	default:
		http.NotFound(w, r)
	}
}

func targetStart(t *testing.T, s *targetServer) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// targetRecords reads a run's records.jsonl.
func targetRecords(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("records.jsonl line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestTargetV1SuffixKeepsServerTokenizer: --url with and without /v1 names
// the same server, so prompts are sized with the server's /tokenize either
// way: the same tokenizer in run.json and the same prompt sizes, exactly
// those asked for, as the server itself counts them.
func TestTargetV1SuffixKeepsServerTokenizer(t *testing.T) {
	url := targetStart(t, &targetServer{models: []string{"m"}})
	for _, u := range []string{url, url + "/v1", url + "/v1/"} {
		dir := filepath.Join(t.TempDir(), "run")
		code, _, stderr := run(t, "run", "--url", u, "--api", "openai-completions", "--model", "m", "--concurrency", "1", "--requests", "4",
			"--prompt-tokens", "40", "--output-tokens", "3", "--out", dir)
		if code != 0 {
			t.Fatalf("--url %s: exit %d\n%s", u, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var runInfo struct {
			Tokenizer string `json:"tokenizer"`
			Target    struct {
				URL string `json:"url"`
			} `json:"target"`
		}
		if err := json.Unmarshal(b, &runInfo); err != nil {
			t.Fatal(err)
		}
		if runInfo.Tokenizer != "server:sglang" || runInfo.Target.URL != url {
			t.Errorf("--url %s: run.json tokenizer %q url %q, want server:sglang and %s", u, runInfo.Tokenizer, runInfo.Target.URL, url)
		}
		recs := targetRecords(t, dir)
		if len(recs) != 4 {
			t.Fatalf("--url %s: %d records, want 4", u, len(recs))
		}
		for _, r := range recs {
			if r["prompt_tokens"] != 40.0 || r["prompt_tokens_requested"] != 40.0 {
				t.Errorf("--url %s: prompt sized %v tokens (asked %v), want 40 as the server counts", u, r["prompt_tokens"], r["prompt_tokens_requested"])
			}
		}
	}
}
