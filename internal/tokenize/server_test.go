package tokenize

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/record"
)

// testTarget is the server at url, with key as its API key ("" for none).
func testTarget(t *testing.T, url, key string) *backend.Target {
	t.Helper()
	tg, err := backend.NewTarget(backend.TargetOptions{URL: url, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestServerCount(t *testing.T) {
	cases := []struct {
		name    string
		engine  *fakeEngine
		special bool
		want    int
	}{
		{"vllm with BOS", &fakeEngine{shape: ShapeVLLM, bos: true}, true, 4},         // 3 words + BOS
		{"vllm without special", &fakeEngine{shape: ShapeVLLM, bos: true}, false, 3}, // add_special_tokens false
		{"sglang", &fakeEngine{shape: ShapeSGLang}, true, 3},                         // no BOS in this model
		{"llama.cpp", &fakeEngine{shape: ShapeLlamaCpp, bos: true}, true, 4},         // add_special honoured
		{"llama.cpp no special", &fakeEngine{shape: ShapeLlamaCpp, bos: true}, false, 3},
		{"tgi", &fakeEngine{shape: ShapeTGI, bos: true}, true, 4}, // TGI always adds its specials
	}
	for _, c := range cases {
		srv := c.engine.start(t)
		s := &Server{Target: testTarget(t, srv.URL+"/", ""), Shape: c.engine.shape, AddSpecial: c.special}
		got, err := s.Count(context.Background(), "one two three")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: got %d tokens, want %d", c.name, got, c.want)
		}
		if s.Source() != record.SourceServer || s.Name() != "server:"+string(c.engine.shape) {
			t.Errorf("%s: source %q name %q", c.name, s.Source(), s.Name())
		}
	}
}

func TestServerCountChat(t *testing.T) {
	msgs := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "one two three"}}
	cases := []struct {
		shape  Shape
		wantOK bool
		want   int
	}{
		{ShapeVLLM, true, 12}, // 7 template tokens + 2 + 3 content words
		{ShapeSGLang, false, 0},
		{ShapeLlamaCpp, false, 0},
		{ShapeTGI, false, 0},
	}
	for _, c := range cases {
		srv := (&fakeEngine{shape: c.shape, template: 7}).start(t)
		s := &Server{Target: testTarget(t, srv.URL, ""), Shape: c.shape}
		got, ok, err := s.CountChat(context.Background(), msgs)
		if err != nil || ok != c.wantOK || got != c.want {
			t.Errorf("%s: got %d, %v, %v; want %d, %v, nil", c.shape, got, ok, err, c.want, c.wantOK)
		}
	}
}

func TestServerSendsHeader(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte(`{"count": 1, "tokens": [1]}`))
	}))
	defer srv.Close()
	s := &Server{Target: testTarget(t, srv.URL, "k"), Shape: ShapeVLLM}
	if _, err := s.Count(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if got != "Bearer k" {
		t.Errorf("got Authorization %q", got)
	}
}

func TestServerErrors(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"http 500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "engine dead", 500) }, "HTTP 500: engine dead"},
		{"not json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }, "unexpected response"},
		{"no count", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) }, "neither count nor tokens"},
		{"stall", stallHandler, "deadline exceeded"},
	}
	for _, c := range cases {
		srv := httptest.NewServer(c.handler)
		s := &Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeVLLM, Timeout: 100 * time.Millisecond}
		_, err := s.Count(context.Background(), "x")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		srv.Close()
	}
	var se *StatusError
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	_, err := (&Server{Target: testTarget(t, srv.URL, ""), Shape: ShapeTGI}).Count(context.Background(), "x")
	if !errors.As(err, &se) || se.Status != 503 {
		t.Errorf("got %v, want a *StatusError with status 503", err)
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		name      string
		engine    *fakeEngine
		wantShape Shape
		wantMax   int
	}{
		{"vllm", &fakeEngine{shape: ShapeVLLM, bos: true, maxLen: 8192, model: "m"}, ShapeVLLM, 8192},
		{"sglang", &fakeEngine{shape: ShapeSGLang, maxLen: 4096}, ShapeSGLang, 4096},
		{"llama.cpp", &fakeEngine{shape: ShapeLlamaCpp, maxLen: 2048}, ShapeLlamaCpp, 2048},
		{"tgi", &fakeEngine{shape: ShapeTGI, maxLen: 1024}, ShapeTGI, 1024},
	}
	for _, c := range cases {
		srv := c.engine.start(t)
		// The same server named with a /v1 suffix: the OpenAI APIs' root
		// is not where /tokenize lives, and detection must not care.
		for _, url := range []string{srv.URL, srv.URL + "/v1", srv.URL + "/v1/"} {
			s, err := Detect(context.Background(), testTarget(t, url, ""), "m")
			if err != nil || s == nil || s.Shape != c.wantShape {
				t.Errorf("%s at %s: got %v, %v", c.name, url, s, err)
			}
		}
		s, err := Detect(context.Background(), testTarget(t, srv.URL, ""), "m")
		if err != nil || s == nil {
			t.Fatalf("%s: got %v, %v", c.name, s, err)
		}
		if s.Shape != c.wantShape || s.MaxModelLen != c.wantMax || !s.AddSpecial {
			t.Errorf("%s: got shape %s max %d special %v; want %s %d true", c.name, s.Shape, s.MaxModelLen, s.AddSpecial, c.wantShape, c.wantMax)
		}
		if n, err := s.Count(context.Background(), "a b"); err != nil || n < 2 {
			t.Errorf("%s: detected counter counts %d, %v", c.name, n, err)
		}
	}
}

func TestDetectNoTokenizer(t *testing.T) {
	srv := (&fakeEngine{}).start(t) // answers 404 everywhere, like Ollama
	s, err := Detect(context.Background(), testTarget(t, srv.URL, ""), "llama3")
	if s != nil || err != nil {
		t.Fatalf("got %v, %v; want nil, nil", s, err)
	}
}

func TestDetectFailures(t *testing.T) {
	ctx := context.Background()
	// vLLM answers 404 for an unknown model name: that is not "no tokenizer".
	srv := (&fakeEngine{shape: ShapeVLLM, model: "real"}).start(t)
	if s, err := Detect(ctx, testTarget(t, srv.URL, ""), "typo"); s != nil || err == nil || !strings.Contains(err.Error(), `"typo"`) {
		t.Errorf("unknown model: got %v, %v", s, err)
	}
	// A server that refuses every shape.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 400) }))
	defer bad.Close()
	if s, err := Detect(ctx, testTarget(t, bad.URL, ""), "m"); s != nil || err == nil || !strings.Contains(err.Error(), "no known shape") {
		t.Errorf("unknown shape: got %v, %v", s, err)
	}
	// Nothing listening.
	bad.Close()
	if s, err := Detect(ctx, testTarget(t, bad.URL, ""), "m"); s != nil || err == nil {
		t.Errorf("closed server: got %v, %v", s, err)
	}
	// A server that never answers: bounded by the caller's context.
	stall := httptest.NewServer(http.HandlerFunc(stallHandler))
	defer stall.Close()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if s, err := Detect(short, testTarget(t, stall.URL, ""), "m"); s != nil || err == nil {
		t.Errorf("stalled server: got %v, %v", s, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Detect took %v against a stalled server", d)
	}
}

// stallHandler never answers. It reads the body first: only then does the
// server notice the client hanging up and cancel the request's context.
func stallHandler(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}
