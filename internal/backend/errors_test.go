package backend

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

const ndjson = "application/x-ndjson"

func TestErrorClasses(t *testing.T) {
	tests := []struct {
		name   string
		api    string
		o      Options
		req    *Request
		script script
		// Expected class, status, Retry-After, a substring of the message,
		// and the number of chunks kept.
		class, retryAfter, msg string
		status, chunks         int
	}{
		// Rate limiting keeps Retry-After.
		{name: "429", script: script{Status: 429, Header: map[string]string{"Retry-After": "2", "Content-Type": "application/json"},
			Steps: []step{{0, `{"error":{"message":"slow down"}}`}}},
			class: record.ClassRateLimited, status: 429, retryAfter: "2", msg: "slow down"},
		{name: "400", script: script{Status: 400, Steps: []step{{0, `{"object":"error","message":"max_tokens too large"}`}}},
			class: record.ClassHTTP4xx, status: 400, msg: "max_tokens too large"},
		{name: "503", script: script{Status: 503, Header: map[string]string{"Retry-After": "5"}, Steps: []step{{0, "overloaded"}}},
			class: record.ClassHTTP5xx, status: 503, retryAfter: "5", msg: "overloaded"},
		// Out-of-memory wins over the status class.
		{name: "500 oom", script: script{Status: 500, Steps: []step{{0, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}}},
			class: record.ClassOOM, status: 500, msg: "CUDA out of memory"},
		{name: "400 kv cache", script: script{Status: 400, Steps: []step{{0, `{"error":"failed to find free space in the KV cache"}`}}},
			class: record.ClassOOM, status: 400, msg: "KV cache"},
		// A redirect is not followed (it would turn the POST into a GET).
		{name: "redirect", script: script{Status: 301, Header: map[string]string{"Location": "https://h/v1/chat/completions"}},
			class: record.ClassNotStream, status: 301, msg: "redirected to https://h/"},
		// The body ends without [DONE]: the tokens received are kept.
		{name: "cut", script: script{Steps: []step{{0, content("a")}, {10 * ms, content("b")}}},
			class: record.ClassStreamCut, msg: "[DONE]", chunks: 2},
		{name: "cut inside chunk", script: script{Steps: []step{{0, content("a") + `data: {"choices":[{"del`}}},
			class: record.ClassStreamCut, msg: "inside a chunk", chunks: 1},
		{name: "malformed", script: script{Steps: []step{{0, content("a") + ev(`{"choices":[{"delta":{"content":"b"}}]`)}}},
			class: record.ClassMalformed, msg: "unexpected end", chunks: 1},
		{name: "wrong shape", script: script{Steps: []step{{0, ev(`{"choices":{"delta":1}}`)}}},
			class: record.ClassMalformed, msg: "cannot unmarshal"},
		// A server that ignored stream: true cannot be timed.
		{name: "not stream", script: script{Header: map[string]string{"Content-Type": "application/json"},
			Steps: []step{{0, `{"choices":[{"message":{"content":"hello"}}],"usage":{"completion_tokens":1}}`}}},
			class: record.ClassNotStream, status: 200, msg: "application/json"},
		// A JSON completion labelled text/event-stream has no event: it is
		// not a stream, not a cut one; a JSON error body stays an error.
		{name: "json as event-stream", script: script{Steps: []step{{0, `{"choices":[{"message":{"content":"hello"}}],"usage":{"completion_tokens":1}}`}}},
			class: record.ClassNotStream, status: 200, msg: `not an event stream although its content type is "text/event-stream"`},
		{name: "json error as event-stream", script: script{Steps: []step{{0, `{"error":{"message":"boom"}}`}}},
			class: record.ClassServerError, status: 200, msg: "boom"},
		// No content-bearing token before the end: a failure, never a
		// completed request of 0 tokens.
		{name: "done first", script: script{Steps: []step{{0, done}}},
			class: record.ClassEmptyStream, msg: "[DONE]) before any token"},
		{name: "role and usage only", script: script{Steps: []step{{0, chat(roleChunk) + ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`) + usage(5, 0) + done}}},
			class: record.ClassEmptyStream, msg: `finish reason "stop"`},
		{name: "empty body", script: script{}, class: record.ClassEmptyStream, status: 200, msg: "before any event"},
		{name: "comments only", script: script{Steps: []step{{0, ": ping\n\n"}}}, class: record.ClassEmptyStream, status: 200},
		{name: "empty json body", script: script{Header: map[string]string{"Content-Type": "application/json"}},
			class: record.ClassEmptyStream, status: 200, msg: "empty"},
		{name: "error event", script: script{Steps: []step{{0, content("a") + ev(`{"error":{"message":"boom","type":"InternalServerError","code":500}}`)}}},
			class: record.ClassServerError, msg: "boom", chunks: 1},
		{name: "old vllm error", script: script{Steps: []step{{0, ev(`{"object":"error","message":"bad","type":"BadRequestError","code":400}`)}}},
			class: record.ClassServerError, msg: "bad"},
		{name: "event: error", script: script{Steps: []step{{0, "event: error\ndata: upstream gone\n\n"}}},
			class: record.ClassServerError, msg: "upstream gone"},
		{name: "oom event", script: script{Steps: []step{{0, ev(`{"error":"CUDA error: out of memory"}`)}}},
			class: record.ClassOOM, msg: "out of memory"},
		// Timeouts: before the first token, and mid-stream.
		{name: "first-token timeout", o: Options{FirstTokenTimeout: 50 * ms},
			script: script{Steps: []step{{0, chat(roleChunk)}}, Hang: true}, class: record.ClassTimeoutFirst, msg: "50ms"},
		{name: "timeout before token", o: Options{Timeout: 80 * ms},
			script: script{Hang: true}, class: record.ClassTimeoutFirst, msg: "80ms"},
		// The first token goes at once and the first-token timeout is wide:
		// under the race detector on a busy machine, a token due at 10 ms
		// arrived after a 50 ms first-token timeout.
		{name: "timeout mid-stream", o: Options{Timeout: 400 * ms, FirstTokenTimeout: 200 * ms},
			script: script{Steps: []step{{0, content("a")}}, Hang: true}, class: record.ClassTimeoutMid, msg: "400ms", chunks: 1},
		// A request that cannot be built.
		{name: "client", api: record.APIOpenAICompletions, req: &Request{Messages: []Message{{"user", "x"}}},
			class: record.ClassClient, msg: "takes a prompt"},
		// Ollama: error lines, cut streams, HTTP errors, JSON bodies.
		{name: "ollama error line", api: record.APIOllamaChat, script: script{Header: map[string]string{"Content-Type": ndjson},
			Steps: []step{{0, `{"message":{"content":"a"},"done":false}` + "\n" + `{"error":"llama runner process has terminated"}` + "\n"}}},
			class: record.ClassServerError, msg: "runner", chunks: 1},
		{name: "ollama cut", api: record.APIOllamaGenerate, script: script{Header: map[string]string{"Content-Type": ndjson},
			Steps: []step{{0, `{"response":"a","done":false}` + "\n"}}},
			class: record.ClassStreamCut, msg: `"done": true`, chunks: 1},
		{name: "ollama done first", api: record.APIOllamaChat, script: script{Header: map[string]string{"Content-Type": ndjson},
			Steps: []step{{0, `{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":0}` + "\n"}}},
			class: record.ClassEmptyStream, msg: `"done": true) before any token`},
		{name: "ollama empty body", api: record.APIOllamaGenerate, script: script{Header: map[string]string{"Content-Type": ndjson}},
			class: record.ClassEmptyStream, status: 200},
		{name: "ollama 404", api: record.APIOllamaChat, script: script{Status: 404, Header: map[string]string{"Content-Type": "application/json"},
			Steps: []step{{0, `{"error":"model \"m\" not found, try pulling it first"}`}}},
			class: record.ClassHTTP4xx, status: 404, msg: "not found"},
		{name: "ollama not stream", api: record.APIOllamaGenerate, script: script{Header: map[string]string{"Content-Type": "application/json"},
			Steps: []step{{0, `{"response":"all at once","done":true}`}}},
			class: record.ClassNotStream, status: 200, msg: "application/x-ndjson"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.API = tt.api
			start := time.Now()
			rec := do(t, tt.script, tt.o, tt.req)
			e := rec.Error
			if e == nil {
				t.Fatalf("no error; record %+v", rec)
			}
			if e.Class != tt.class || e.Status != tt.status || e.RetryAfter != tt.retryAfter || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want class %q status %d retry-after %q message containing %q", e, tt.class, tt.status, tt.retryAfter, tt.msg)
			}
			if len(rec.Chunks) != tt.chunks {
				t.Errorf("kept %d chunks, want %d", len(rec.Chunks), tt.chunks)
			}
			if end := time.Duration(rec.EndNS); rec.EndNS < rec.SentNS || end > time.Since(start) {
				t.Errorf("end %v outside [sent %v, now]", end, time.Duration(rec.SentNS))
			}
		})
	}
}

func TestConnectRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rec := doURL(t, context.Background(), "http://"+addr, Options{}, nil)
	if rec.Error == nil || rec.Error.Class != record.ClassConnect {
		t.Errorf("error %+v, want class %q", rec.Error, record.ClassConnect)
	}
}

func TestCancelled(t *testing.T) {
	srv := httptest.NewServer(script{Steps: []step{{0, content("a")}}, Hang: true})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*ms)
	defer cancel()
	rec := doURL(t, ctx, srv.URL, Options{}, nil)
	if rec.Error == nil || rec.Error.Class != record.ClassCancelled || len(rec.Chunks) != 1 {
		t.Errorf("error %+v with %d chunks, want class %q and 1 chunk", rec.Error, len(rec.Chunks), record.ClassCancelled)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	// Servers that echo the Authorization header back, in an HTTP error, an
	// error event and a malformed chunk, padded so that clipping the
	// message would cut the key in half if it were clipped before
	// redaction.
	echo := func(status int, wrap func(string) string) func(pad int) http.Handler {
		return func(pad int) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(status)
				w.Write([]byte(wrap(strings.Repeat("x", pad) + r.Header.Get("Authorization"))))
			})
		}
	}
	for name, h := range map[string]func(int) http.Handler{
		"401":         echo(401, func(s string) string { return `{"error":"invalid key ` + s + `"}` }),
		"500 oom":     echo(500, func(s string) string { return "out of memory " + s }),
		"error event": echo(200, func(s string) string { return ev(`{"error":{"message":"` + s + `"}}`) }),
		"event error": echo(200, func(s string) string { return "event: error\ndata: " + s + "\n\n" }),
	} {
		for pad := maxMessage - 40; pad < maxMessage; pad += 5 {
			rec := do(t, h(pad), Options{}, nil)
			if rec.Error == nil {
				t.Fatalf("%s: no error", name)
			}
			for i := 4; i <= len(testKey); i++ {
				if strings.Contains(rec.Error.Message, testKey[:i]) {
					t.Fatalf("%s, pad %d: message %q contains the key's first %d bytes", name, pad, rec.Error.Message, i)
				}
			}
		}
	}
	// A malformed chunk quotes the chunk.
	rec := do(t, echo(200, func(s string) string { return ev(`{"bad ` + s[len(s)-40:]) })(40), Options{}, nil)
	if rec.Error == nil || strings.Contains(rec.Error.Message, testKey[:4]) {
		t.Errorf("malformed chunk: error %+v", rec.Error)
	}
}

func TestLooksOOM(t *testing.T) {
	for s, want := range map[string]bool{
		"CUDA out of memory":                  true,
		"ggml: failed to allocate buffer":     true,
		"OOM when allocating tensor":          true,
		"killed (OOM)":                        true,
		"no room in the zoom":                 false,
		"BLOOM model not found":               false,
		"insufficient memory for the request": true,
	} {
		if got := looksOOM(s); got != want {
			t.Errorf("looksOOM(%q) = %v, want %v", s, got, want)
		}
	}
}
