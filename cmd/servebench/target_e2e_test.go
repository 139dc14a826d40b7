package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
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
	models []string // served names; nil: /v1/models answers 404
	// authStatus, when set, answers every request with that status and
	// an OpenAI-style error, as a server refusing the credentials does.
	authStatus  int
	completions atomic.Int64
}

func targetWords(s string) int { return len(strings.Fields(s)) + 1 }

func (s *targetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/completions") {
		s.completions.Add(1)
	}
	if s.authStatus != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.authStatus)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		return
	}
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

func targetStart(t *testing.T, s http.Handler) string {
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

// targetArgs is a small run against url, written to dir.
func targetArgs(url, dir string, extra ...string) []string {
	return append([]string{"run", "--url", url, "--api", "openai-completions", "--concurrency", "1",
		"--requests", "3", "--prompt-tokens", "8", "--output-tokens", "3", "--tokenizer", "cl100k_base",
		"--out", dir}, extra...)
}

// targetNoRecords fails unless dir holds no records: nothing was measured.
func targetNoRecords(t *testing.T, name, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if len(b) > 0 {
		t.Errorf("%s: records written:\n%s", name, b)
	}
}

// TestTargetPreflightFaults: a misconfiguration stops the run before any
// load with exit 1 and a message that says what is wrong, in the server's
// own words where it gave some.
func TestTargetPreflightFaults(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	refused := closed.URL
	closed.Close()
	unauthorized := &targetServer{models: []string{"m"}, authStatus: http.StatusUnauthorized}
	forbidden := &targetServer{models: []string{"m"}, authStatus: http.StatusForbidden}
	wrongModel := &targetServer{models: []string{"llama-a", "llama-b"}}
	plain := &targetServer{models: []string{"m"}}
	plainURL := targetStart(t, plain)
	tlsOnly := &targetServer{models: []string{"m"}}
	tlsSrv := httptest.NewUnstartedServer(tlsOnly)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the plain-HTTP request it refuses
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	openSSL := targetTLSPort(t, tlsSrv.TLS)
	tests := []struct {
		name   string
		url    string
		model  string
		server *targetServer // nil: nothing to ask what it was sent
		want   []string
	}{
		{"connection refused", refused, "m", nil, []string{"no server answers at " + refused, "Try: start the server"}},
		// .invalid never resolves (RFC 6761): nothing leaves the machine.
		{"dns failure", "http://servebench-test.invalid:8000", "m", nil, []string{`cannot resolve host "servebench-test.invalid"`}},
		{"401", targetStart(t, unauthorized), "m", unauthorized, []string{"wants credentials", "HTTP 401", "Incorrect API key provided", "SERVEBENCH_API_KEY"}},
		{"403", targetStart(t, forbidden), "m", forbidden, []string{"HTTP 403", "Incorrect API key provided"}},
		{"404 model", targetStart(t, wrongModel), "llama-c", wrongModel, []string{`does not serve model "llama-c"`, "it serves: llama-a, llama-b", "--no-preflight"}},
		{"https to an http port", "https://" + strings.TrimPrefix(plainURL, "http://"), "m", plain, []string{"speaks plain HTTP, not https: use http://"}},
		{"http to an https port", "http://" + strings.TrimPrefix(tlsSrv.URL, "https://"), "m", tlsOnly, []string{"speaks https, not plain HTTP: use https://"}},
		// Python's and uvicorn's TLS (OpenSSL) reset plain HTTP instead.
		{"http to an OpenSSL https port", "http://" + openSSL, "m", nil, []string{"the server at http://" + openSSL + " answered plain HTTP with a", "its port speaks TLS: use https://", "Try: change the scheme"}},
		// A path under which nothing is served: every request would 404.
		{"path that serves nothing", plainURL + "/serving", "m", nil, []string{"nothing is served at " + plainURL + "/serving: GET " + plainURL + "/serving/v1/models and POST " + plainURL + "/serving/v1/completions answered HTTP 404", "Try: give --url the server's root"}},
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := run(t, targetArgs(tt.url, dir, "--model", tt.model)...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\nstderr: %s", tt.name, code, stderr)
		}
		if !strings.HasPrefix(stderr, "Error: preflight: ") {
			t.Errorf("%s: stderr does not start with the preflight error:\n%s", tt.name, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tt.name, w, stderr)
			}
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q, want nothing", tt.name, stdout)
		}
		targetNoRecords(t, tt.name, dir)
		if tt.server != nil && tt.server.completions.Load() != 0 {
			t.Errorf("%s: the server was sent %d completion requests, want none", tt.name, tt.server.completions.Load())
		}
	}
}

// targetTLSPort listens on loopback with TLS as OpenSSL servers do: a
// client that is not one is dropped, with no HTTP answer.
func targetTLSPort(t *testing.T, conf *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// TestTargetEndpointURL: a --url that names an API's endpoint, as client
// settings do, measures the server at its root with that API (unless
// --api says otherwise), and says so in one line.
func TestTargetEndpointURL(t *testing.T) {
	srv := &targetServer{models: []string{"m"}}
	url := targetStart(t, srv)
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, "run", "--url", url+"/v1/completions", "--concurrency", "1", "--requests", "3",
		"--prompt-tokens", "8", "--output-tokens", "3", "--tokenizer", "cl100k_base", "--out", dir)
	note := "note: --url ends in the openai-completions endpoint: measuring the server at " + url + " with --api openai-completions\n"
	if code != 0 || !strings.Contains(stderr, note) || srv.completions.Load() != 3 {
		t.Fatalf("exit %d, %d completions, stderr:\n%s\nwant 0, 3 and %q", code, srv.completions.Load(), stderr, note)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runInfo struct {
		Target struct {
			URL string `json:"url"`
			API string `json:"api"`
		} `json:"target"`
	}
	if err := json.Unmarshal(b, &runInfo); err != nil {
		t.Fatal(err)
	}
	if runInfo.Target.URL != url || runInfo.Target.API != "openai-completions" {
		t.Errorf("run.json target %+v, want %s and openai-completions", runInfo.Target, url)
	}
	// --api given wins over the path, and the note says which is used.
	code, _, stderr = run(t, "run", "--url", url+"/v1/completions", "--api", "openai-chat", "--concurrency", "1", "--requests", "1",
		"--prompt-tokens", "8", "--output-tokens", "3", "--tokenizer", "cl100k_base", "--no-preflight")
	if code != 1 || !strings.Contains(stderr, "measuring the server at "+url+" with --api openai-chat\n") {
		t.Errorf("--api openai-chat: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestTargetPreflightLenient: a server without a model list is measured
// with a one-line note; --no-preflight skips the check; with no --model
// and one served model, that model is used and named.
func TestTargetPreflightLenient(t *testing.T) {
	// No /v1/models (404): measured, with a note.
	noList := &targetServer{}
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, targetArgs(targetStart(t, noList), dir, "--model", "m")...)
	if code != 0 || !strings.Contains(stderr, "note: model not checked: GET /v1/models answered HTTP 404") || noList.completions.Load() != 3 {
		t.Errorf("no model list: exit %d, %d completions, stderr:\n%s", code, noList.completions.Load(), stderr)
	}

	// --no-preflight sends the load even to a server that would fail it.
	refusing := &targetServer{models: []string{"m"}, authStatus: http.StatusUnauthorized}
	dir = filepath.Join(t.TempDir(), "run")
	code, _, stderr = run(t, targetArgs(targetStart(t, refusing), dir, "--model", "m", "--no-preflight")...)
	if strings.Contains(stderr, "preflight") || refusing.completions.Load() != 3 || len(targetRecords(t, dir)) != 3 {
		t.Errorf("--no-preflight: exit %d, %d completions, stderr:\n%s", code, refusing.completions.Load(), stderr)
	}

	// No --model, one served model: it is used, and said.
	one := &targetServer{models: []string{"only-model"}}
	dir = filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := run(t, targetArgs(targetStart(t, one), dir)...)
	if code != 0 || !strings.Contains(stderr, "model: only-model (no --model given") || !strings.Contains(stdout, "model only-model") {
		t.Errorf("only model: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, r := range targetRecords(t, dir) {
		if r["model"] != "only-model" {
			t.Errorf("only model: record model %v", r["model"])
		}
	}
}

// TestTargetSimulatorPassesPreflight: the built-in simulator lists its
// model on both APIs' lists, and a wrong name for it is caught.
func TestTargetSimulatorPassesPreflight(t *testing.T) {
	for _, api := range []string{"openai-chat", "ollama-chat"} {
		code, _, stderr := run(t, "run", "--api", api, "--concurrency", "1", "--requests", "2", "--output-tokens", "4")
		if code != 0 || strings.Contains(stderr, "note:") {
			t.Errorf("%s: exit %d, stderr:\n%s", api, code, stderr)
		}
	}
	code, _, stderr := run(t, "run", "--model", "nope", "--concurrency", "1", "--requests", "2")
	if code != 1 || !strings.Contains(stderr, `does not serve model "nope"; it serves: sim-llama-3.1-8b`) {
		t.Errorf("wrong model for the simulator: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestTargetDecidePreflight: decide checks every candidate before it
// measures any: one refusing the credentials stops it with exit 1 before
// the good one is sent load.
func TestTargetDecidePreflight(t *testing.T) {
	good := &targetServer{models: []string{"m"}}
	bad := &targetServer{models: []string{"m"}, authStatus: http.StatusUnauthorized}
	code, _, stderr := run(t, "decide", "--objective", "chat", "--model", "m", "--api", "openai-completions",
		"--tokenizer", "cl100k_base", "--requests", "4",
		"--target", "name=good,url="+targetStart(t, good), "--target", "name=bad,url="+targetStart(t, bad))
	if code != 1 || !strings.Contains(stderr, "Error: candidate bad: preflight: ") || !strings.Contains(stderr, "HTTP 401") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if n := good.completions.Load() + bad.completions.Load(); n != 0 {
		t.Errorf("%d completion requests sent, want none", n)
	}
}
