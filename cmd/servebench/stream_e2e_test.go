package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The protocol cases of the fault matrix: a server that answers the first
// request properly and every later one with a fault. Each case checks the
// class, status and message of the faulty records, the counts in
// summary.json, one record per request the server received (nothing
// retried, nothing lost), the exit code and the run's wall time.

// streamRequests is how many requests each case sends: one good, the rest
// faulty.
const streamRequests = 3

// streamHang bounds how long a hanging fault waits for the client.
const streamHang = 5 * time.Second

// streamServer serves the model list and the streaming APIs, counting the
// generation requests it receives.
type streamServer struct {
	fault http.HandlerFunc
	posts atomic.Int64
}

func (s *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"test"}]}`)
	case "/api/tags":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"models":[{"name":"m","model":"m"}]}`)
	case "/v1/chat/completions", "/api/chat":
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if s.posts.Add(1) == 1 {
			streamGood(w, r.URL.Path == "/api/chat")
			return
		}
		s.fault(w, r)
	default:
		http.NotFound(w, r)
	}
}

// streamGood answers with two tokens and the server's usage report.
func streamGood(w http.ResponseWriter, ollama bool) {
	if ollama {
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprint(w, `{"message":{"role":"assistant","content":"a"},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":" b"},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":8,"eval_count":2}`+"\n")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, streamEvent(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`)+
		streamEvent(`{"choices":[{"index":0,"delta":{"content":" b"},"finish_reason":"length"}]}`)+
		streamEvent(`{"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2}}`)+"data: [DONE]\n\n")
}

func streamEvent(data string) string { return "data: " + data + "\n\n" }

// streamWrite answers with status, content type and body, at once.
func streamWrite(status int, contentType, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// streamThenHang sends head, then keeps the connection open until the
// client leaves.
func streamThenHang(head string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, head)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(streamHang):
		}
	}
}

// streamTrickle is a slow-loris: it sends body one byte every gap and
// never finishes a line.
func streamTrickle(body string, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := range len(body) {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
			}
			w.Write([]byte{body[i]})
			w.(http.Flusher).Flush()
		}
	}
}

// streamCut sends one token and then drops the connection mid-response.
func streamCut(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, streamEvent(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`))
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// streamCase is one fault and what the faulty requests must record.
type streamCase struct {
	name  string
	api   string // default openai-chat
	fault http.HandlerFunc
	args  []string
	// The faulty records' class, HTTP status, Retry-After, a substring of
	// their message, and the chunks each keeps.
	class, retryAfter, msg string
	status, chunks         int
}

func TestStreamFaultMatrix(t *testing.T) {
	bigLine := streamEvent(`{"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 9<<20) + `"}}]}`)
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
	tests := []streamCase{
		{name: "400", fault: streamWrite(400, "application/json", `{"object":"error","message":"max_tokens is too large","code":400}`),
			class: "http_4xx", status: 400, msg: "max_tokens is too large"},
		// A 429 is recorded with its Retry-After, neither retried nor
		// waited for: the run stays short although the server asks for 30 s.
		{name: "429 with Retry-After", fault: streamWrite(429, "application/json", `{"error":{"message":"rate limit exceeded"}}`, "Retry-After", "30"),
			class: "http_429", status: 429, retryAfter: "30", msg: "rate limit exceeded"},
		{name: "500", fault: streamWrite(500, "text/plain", "internal error"),
			class: "http_5xx", status: 500, msg: "internal error"},
		{name: "oom http", fault: streamWrite(500, "text/plain", oom),
			class: "out_of_memory", status: 500, msg: "CUDA out of memory"},
		{name: "oom in stream", fault: streamWrite(200, "text/event-stream",
			streamEvent(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`)+streamEvent(`{"error":{"message":"`+oom+`","code":500}}`)),
			class: "out_of_memory", msg: "CUDA out of memory", chunks: 1},
		{name: "stream cut", fault: streamCut, class: "stream_cut", msg: "stream broke before [DONE]", chunks: 1},
		{name: "malformed chunk", fault: streamWrite(200, "text/event-stream",
			streamEvent(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`)+streamEvent(`{"choices":[{"delta":`)+"data: [DONE]\n\n"),
			class: "malformed_chunk", msg: "unexpected end", chunks: 1},
		// A server that ignored "stream": true, labelling its JSON either way.
		{name: "json body as application/json", fault: streamWrite(200, "application/json",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"a b"}}],"usage":{"completion_tokens":2}}`),
			class: "not_stream", status: 200, msg: `content type "application/json"`},
		{name: "json body as text/event-stream", fault: streamWrite(200, "text/event-stream",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"a b"}}],"usage":{"completion_tokens":2}}`),
			class: "not_stream", status: 200, msg: "not an event stream"},
		// No token before the end is a failure, not a 0-token success.
		{name: "[DONE] first", fault: streamWrite(200, "text/event-stream", "data: [DONE]\n\n"),
			class: "empty_stream", msg: "before any token"},
		{name: "ollama done first", api: "ollama-chat", fault: streamWrite(200, "application/x-ndjson",
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":0}`+"\n"),
			class: "empty_stream", msg: "before any token"},
		{name: "empty body", fault: streamWrite(200, "text/event-stream", ""),
			class: "empty_stream", status: 200, msg: "before any event"},
		{name: "no first token before the timeout", args: []string{"--first-token-timeout", "300ms"},
			fault: streamThenHang(streamEvent(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)),
			class: "timeout_first", msg: "no token within 300ms"},
		// Bytes keep coming, never a token: --timeout still ends it.
		{name: "slow-loris", args: []string{"--timeout", "500ms"},
			fault: streamTrickle(streamEvent(`{"choices":[{"index":0,"delta":{"content":"`+strings.Repeat("x", 200)+`"}}]}`), 20*time.Millisecond),
			class: "timeout_first", msg: "no token within 500ms"},
		{name: "9 MB line", fault: streamWrite(200, "text/event-stream", bigLine),
			class: "malformed_chunk", msg: "exceeds 8388608 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { streamCheck(t, tt) })
	}
}

// streamRecord is the part of a record these tests read.
type streamRecord struct {
	Phase  string `json:"phase"`
	Chunks []struct {
		T int64 `json:"t"`
	} `json:"chunks"`
	FirstTokenNS int64 `json:"first_token_ns"`
	Error        *struct {
		Class      string `json:"class"`
		Message    string `json:"message"`
		Status     int    `json:"status"`
		RetryAfter string `json:"retry_after"`
	} `json:"error"`
}

func streamCheck(t *testing.T, tt streamCase) {
	s := &streamServer{fault: tt.fault}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	args := append([]string{"run", "--url", srv.URL, "--api", streamOr(tt.api, "openai-chat"), "--model", "m",
		"--concurrency", "1", "--requests", fmt.Sprint(streamRequests), "--prompt-tokens", "8", "--output-tokens", "2",
		"--tokenizer", "cl100k_base", "--out", dir}, tt.args...)
	start := time.Now()
	code, stdout, stderr := run(t, args...)
	wall := time.Since(start)
	if code != 0 || strings.Contains(stderr, "Error") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if wall > 10*time.Second {
		t.Errorf("the run took %v", wall)
	}

	recs := streamRecords(t, filepath.Join(dir, "records.jsonl"))
	if got, sent := len(recs), int(s.posts.Load()); got != sent || sent != streamRequests {
		t.Errorf("%d records for %d requests received, want %d of each", got, sent, streamRequests)
	}
	for i, r := range recs {
		if i == 0 {
			if r.Error != nil || len(r.Chunks) != 2 {
				t.Errorf("record 0 (the good answer): error %+v, %d chunks", r.Error, len(r.Chunks))
			}
			continue
		}
		e := r.Error
		if e == nil {
			t.Errorf("record %d: no error; want class %s", i, tt.class)
			continue
		}
		if e.Class != tt.class || e.Status != tt.status || e.RetryAfter != tt.retryAfter || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("record %d: error %+v, want class %q status %d retry_after %q message containing %q",
				i, *e, tt.class, tt.status, tt.retryAfter, tt.msg)
		}
		if len(r.Chunks) != tt.chunks || (tt.chunks == 0) != (r.FirstTokenNS == 0) {
			t.Errorf("record %d: %d chunks, first token at %d ns; want %d chunks", i, len(r.Chunks), r.FirstTokenNS, tt.chunks)
		}
	}
	streamCheckSummary(t, dir, tt.class)
	streamCheckErrorList(t, stdout, tt.class, streamRequests-1, tt.msg)
}

// streamCheckErrorList checks the errors listed under the table: the
// class with its count and a sample message that says why.
func streamCheckErrorList(t *testing.T, stdout, class string, n int, msg string) {
	t.Helper()
	for line := range strings.Lines(stdout) {
		head, sample, ok := strings.Cut(strings.TrimSpace(line), ", e.g. ")
		if !strings.HasPrefix(head, fmt.Sprintf("%s %d (", class, n)) {
			continue
		}
		if text, err := strconv.Unquote(sample); !ok || err != nil || !strings.Contains(text, msg) {
			t.Errorf("error list line %q: want a sample message containing %q", line, msg)
		}
		return
	}
	t.Errorf("stdout lists no %d %s errors:\n%s", n, class, stdout)
}

// TestStreamDoneFirstEveryRequestFails: a server that ends every stream
// with [DONE] before any token has served nothing; the run says so and
// exits 1 (it used to count each as a completed request of 0 tokens and
// a fraction of a millisecond).
func TestStreamDoneFirstEveryRequestFails(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		case r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions":
			http.NotFound(w, r)
			return
		}
		posts.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := run(t, "run", "--url", srv.URL, "--model", "m", "--concurrency", "1", "--requests", "2",
		"--prompt-tokens", "8", "--output-tokens", "2", "--tokenizer", "cl100k_base", "--out", dir)
	if code != 1 || !strings.Contains(stderr, "every request failed (empty_stream 2)") {
		t.Errorf("exit %d, stderr %q; want 1 and every request failed as empty_stream", code, stderr)
	}
	if recs := streamRecords(t, filepath.Join(dir, "records.jsonl")); len(recs) != 2 || posts.Load() != 2 {
		t.Errorf("%d records for %d requests, want 2", len(recs), posts.Load())
	}
	streamCheckErrorList(t, stdout, "empty_stream", 2, "before any token")
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || !strings.Contains(string(b), `"completed": 0`) {
		t.Errorf("summary.json: %v\n%.400s", err, b)
	}
}

// streamCheckSummary checks summary.json's counts: one completed request
// and the faulty ones, all under the expected class.
func streamCheckSummary(t *testing.T, dir, class string) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Points []struct {
			Requests struct {
				Completed, Failed int
				Errors            map[string]int
			} `json:"requests"`
			ErrorRate float64 `json:"error_rate"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if len(sum.Points) != 1 {
		t.Fatalf("summary has %d points, want 1", len(sum.Points))
	}
	p := sum.Points[0]
	failed := streamRequests - 1
	want := map[string]int{class: failed}
	if p.Requests.Completed != 1 || p.Requests.Failed != failed || fmt.Sprint(p.Requests.Errors) != fmt.Sprint(want) {
		t.Errorf("summary requests %+v, want 1 completed, %d failed, errors %v", p.Requests, failed, want)
	}
	if wantRate := float64(failed) / streamRequests; p.ErrorRate < wantRate-1e-9 || p.ErrorRate > wantRate+1e-9 {
		t.Errorf("error_rate %v, want %v", p.ErrorRate, wantRate)
	}
}

func streamRecords(t *testing.T, path string) []streamRecord {
	t.Helper()
	recs := jsonLines[streamRecord](t, path)
	for _, r := range recs {
		if r.Phase != "measured" {
			t.Errorf("record in phase %q", r.Phase)
		}
	}
	return recs
}

func streamOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
