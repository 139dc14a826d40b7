package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
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
	// first is how many tokens the first chunk carries (0 means 1), as a
	// server that coalesces tokens or decodes speculatively sends them.
	first   int
	done    atomic.Int64
	started atomic.Int64

	// What the server actually did, which a busy machine makes differ
	// from the script: per request, the first flush after arrival and the
	// mean gap between its flushes (ms).
	mu         sync.Mutex
	firstFlush []float64
	meanGaps   []float64
}

// span is the range of a server-side value over the requests it served.
type span struct{ min, max float64 }

// truth returns the range, over the requests served, of the server's time
// to first flush and of its mean gap between flushes (a request's TPOT as
// the server sent it). A busy machine stretches single requests, so the
// client is held to what the server did to some request, not to a mean
// that one slow gap moves.
func (s *scripted) truth() (ttft, gap span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return span{slices.Min(s.firstFlush), slices.Max(s.firstFlush)},
		span{slices.Min(s.meanGaps), slices.Max(s.meanGaps)}
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
	var first time.Time
	k0 := max(s.first, 1)
	chunks := s.tokens - k0 + 1
	for i := range chunks {
		wait, text := s.gap, " the"
		if i == 0 {
			wait, text = s.ttft, strings.Repeat(" the", k0)
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":%q,\"finish_reason\":null}]}\n\n", text)
		fl.Flush()
		now := time.Now()
		s.mu.Lock()
		if i == 0 {
			first = now
			s.firstFlush = append(s.firstFlush, ms(now.Sub(start)))
		} else if i == chunks-1 {
			// The tokens after the first chunk over the time after it.
			s.meanGaps = append(s.meanGaps, ms(now.Sub(first))/float64(s.tokens-k0))
		}
		s.mu.Unlock()
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
// A run this machine could not measure (the simulator behind its clock,
// the client saturated: exit 4) did not measure what the test asserts;
// it runs once more (its --out directory removed first), and the test is
// skipped if that one could not either.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, stdout, stderr := runMainOnce(t, args...)
	if !machineBehind(code, stderr) {
		return code, stdout, stderr
	}
	t.Logf("again: %s", stderr)
	if i := slices.Index(args, "--out"); i >= 0 && i+1 < len(args) {
		os.RemoveAll(args[i+1])
	}
	code, stdout, stderr = runMainOnce(t, args...)
	if machineBehind(code, stderr) {
		t.Skipf("this machine could not keep up, twice: %s", stderr)
	}
	return code, stdout, stderr
}

// runKeepingClock is runMain for a run whose figures a test reads as the
// simulator's (a calibration's fit): a run whose simulator fell behind its
// clock measured the machine instead, so it is run once more, and the test
// is skipped, saying so, when it falls behind again.
func runKeepingClock(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, stdout, stderr := runMain(t, args...)
	if behind := simBehind(stdout); code == 0 && behind != "" {
		t.Logf("again: %s", behind)
		if i := slices.Index(args, "--out"); i >= 0 && i+1 < len(args) {
			os.RemoveAll(args[i+1])
		}
		code, stdout, stderr = runMain(t, args...)
		if behind := simBehind(stdout); code == 0 && behind != "" {
			t.Skipf("this machine could not keep the simulator's clock, twice: %s", behind)
		}
	}
	return code, stdout, stderr
}

func runMainOnce(t *testing.T, args ...string) (int, string, string) {
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: historyGetenv(t)}
	code := env.Main(t.Context(), args)
	return code, out.String(), errb.String()
}

// skipIfMachineBehind skips a test whose run this machine could not
// measure, though the run's exit did not say so (a capacity search that
// stopped at an invalid probe, an inconclusive decide candidate): what
// the test asserts was not measured.
func skipIfMachineBehind(t *testing.T, inconclusive bool, text string) {
	t.Helper()
	if inconclusive && machineBehind(ExitInconclusive, text) {
		t.Skipf("this machine could not keep up: %s", text)
	}
}

// machineBehind reports an inconclusive run whose reason is the machine's,
// not the server's.
func machineBehind(code int, stderr string) bool {
	return code == ExitInconclusive && (strings.Contains(stderr, metrics.InvalidSimBehind+":") || strings.Contains(stderr, metrics.InvalidClientSaturated+":"))
}
