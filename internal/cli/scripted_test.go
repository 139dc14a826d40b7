package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scripted is an OpenAI-compatible completions server with a scripted
// timing: the first token ttft after the request arrives, then one token
// per chunk gap after the previous one, then a usage-only chunk and
// [DONE]. It counts completed responses and remembers the timing it really
// achieved, so tests can compare the client with the truth.
type scripted struct {
	ttft, gap time.Duration
	tokens    int
	prompt    int
	done      atomic.Int64
	started   atomic.Int64

	// What the server actually did, which a busy machine makes differ
	// from the script: first flush after arrival, and gaps between
	// flushes (ms).
	mu         sync.Mutex
	firstFlush []float64
	gaps       []float64
}

// truth returns the server's median time to first flush and mean gap.
func (s *scripted) truth() (ttft, gap float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := slices.Clone(s.firstFlush)
	slices.Sort(f)
	var sum float64
	for _, g := range s.gaps {
		sum += g
	}
	return f[len(f)/2], sum / float64(len(s.gaps))
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
	last := start
	for i := range s.tokens {
		wait := s.gap
		if i == 0 {
			wait = s.ttft
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" tok%d\",\"finish_reason\":null}]}\n\n", i)
		fl.Flush()
		now := time.Now()
		s.mu.Lock()
		if i == 0 {
			s.firstFlush = append(s.firstFlush, ms(now.Sub(start)))
		} else {
			s.gaps = append(s.gaps, ms(now.Sub(last)))
		}
		s.mu.Unlock()
		last = now
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.prompt, s.tokens)
	fl.Flush()
	s.done.Add(1)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

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
