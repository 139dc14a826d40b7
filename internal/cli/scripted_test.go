package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scripted is an OpenAI-compatible completions server with a known timing:
// a role-free first byte after ttft, then tokens one per chunk every gap,
// then a usage-only chunk and [DONE]. It counts completed responses.
type scripted struct {
	ttft, gap time.Duration
	tokens    int
	prompt    int
	done      atomic.Int64
	started   atomic.Int64
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/completions" && r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	s.started.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	start := time.Now()
	for i := range s.tokens {
		wait := s.ttft + time.Duration(i)*s.gap - time.Since(start)
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" tok%d\",\"finish_reason\":null}]}\n\n", i)
		fl.Flush()
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.prompt, s.tokens)
	fl.Flush()
	s.done.Add(1)
}

func newScripted(t *testing.T, s *scripted) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// runMain runs the CLI in-process and returns exit code, stdout, stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := env.Main(t.Context(), args)
	return code, out.String(), errb.String()
}
