package backend

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// testKey is the API key every test client sends; no error message may
// contain it.
const testKey = "sk-test-9f8e7d6c5b4a"

// step is one write of a scripted server: at offset At from the moment the
// request arrived, write Data and flush.
type step struct {
	At   time.Duration
	Data string
}

// script is a scripted server's answer. Hang keeps the connection open
// after the last step until the client goes away (bounded by hangLimit).
type script struct {
	Status int
	Header map[string]string
	Steps  []step
	Hang   bool
}

// hangLimit bounds how long a hanging handler waits for the client.
const hangLimit = 3 * time.Second

func (sc script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	for k, v := range sc.Header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.WriteHeader(cmp.Or(sc.Status, http.StatusOK))
	w.(http.Flusher).Flush()
	for _, st := range sc.Steps {
		select {
		case <-time.After(time.Until(start.Add(st.At))):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, st.Data)
		w.(http.Flusher).Flush()
	}
	if sc.Hang {
		select {
		case <-r.Context().Done():
		case <-time.After(hangLimit):
		}
	}
}

// ev is one SSE event with data s.
func ev(s string) string { return "data: " + s + "\n\n" }

// chat is an OpenAI chat chunk with the given delta JSON.
func chat(delta string) string {
	return ev(`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`)
}

// content is a chat chunk carrying answer text.
func content(text string) string { return chat(`{"content":"` + text + `"}`) }

const (
	roleChunk = `{"role":"assistant","content":""}`
	done      = "data: [DONE]\n\n"
)

// usage is a usage-only chunk (choices: []), as vLLM sends last.
func usage(prompt, completion int) string {
	return ev(fmt.Sprintf(`{"id":"c1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		prompt, completion, prompt+completion))
}

// words counts space-separated words: a stand-in local tokenizer.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// do runs one request against h with the given API and options.
func do(t *testing.T, h http.Handler, o Options, req *Request) *record.Record {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	return doURL(t, context.Background(), srv.URL, o, req)
}

func doURL(t *testing.T, ctx context.Context, url string, o Options, req *Request) *record.Record {
	t.Helper()
	o.BaseURL = url
	o.API = cmp.Or(o.API, record.APIOpenAIChat)
	o.Model = cmp.Or(o.Model, "m")
	o.APIKey = testKey
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if req == nil {
		req = &Request{Prompt: "hi", MaxTokens: 16}
	}
	rec := &record.Record{}
	epoch := time.Now()
	c.Do(ctx, epoch, req, rec)
	if rec.Error != nil && strings.Contains(rec.Error.Message, testKey) {
		t.Errorf("error message contains the API key: %q", rec.Error.Message)
	}
	return rec
}

func tokens(chunks []record.Chunk) []int {
	var n []int
	for _, c := range chunks {
		n = append(n, c.Tokens)
	}
	return n
}

func mustTarget(t *testing.T, o TargetOptions) *Target {
	t.Helper()
	tg, err := NewTarget(o)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}
