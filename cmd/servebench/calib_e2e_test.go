package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// calibBundleServer streams chat completions whose first chunk carries
// first tokens together, then one token every gap; it records, per
// request, the tokens after its first chunk over the time after it (ms
// per token) as it really sent them.
type calibBundleServer struct {
	first, tokens int
	gap           time.Duration
	mu            sync.Mutex
	tpot          []float64
}

func (s *calibBundleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"test"}]}`)
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(text string) time.Time {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
		fl.Flush()
		return time.Now()
	}
	start := send(strings.Repeat(" the", s.first))
	last := start
	for range s.tokens - s.first {
		time.Sleep(s.gap)
		last = send(" the")
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.tokens)
	fl.Flush()
	s.mu.Lock()
	s.tpot = append(s.tpot, float64(last.Sub(start))/1e6/float64(s.tokens-s.first))
	s.mu.Unlock()
}

// TestCalibFirstChunkDecodeSpeed runs the binary against servers whose
// first chunk bundles 2 and 3 tokens and holds summary.json's TPOT and
// decode speed to what the server sent: the tokens after the first chunk
// over the time after it.
func TestCalibFirstChunkDecodeSpeed(t *testing.T) {
	for _, k0 := range []int{2, 3} {
		s := &calibBundleServer{first: k0, tokens: 9, gap: 15 * time.Millisecond}
		srv := httptest.NewServer(s)
		code, stdout, stderr := run(t, "run", "--url", srv.URL, "--model", "m", "--concurrency", "1",
			"--requests", "3", "--output-tokens", "9", "--tokenizer", "cl100k_base", "--json")
		srv.Close()
		if code != 0 {
			t.Fatalf("k0=%d: exit %d\n%s", k0, code, stderr)
		}
		var sum struct {
			Points []struct {
				TPOT  map[string]float64 `json:"tpot_ms"`
				Speed map[string]float64 `json:"decode_tps_per_request"`
			} `json:"points"`
		}
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Points) != 1 {
			t.Fatalf("k0=%d: summary %v\n%s", k0, err, stdout)
		}
		s.mu.Lock()
		lo, hi := s.tpot[0], s.tpot[0]
		for _, v := range s.tpot {
			lo, hi = min(lo, v), max(hi, v)
		}
		s.mu.Unlock()
		// The client reads each token after the server sent it, and not
		// much later: within 1 ms a token of the server's own figure.
		p := sum.Points[0]
		if got := p.TPOT["max"]; got < lo-0.5 || got > hi+1 {
			t.Errorf("k0=%d: tpot max %v ms, server sent %v–%v", k0, got, lo, hi)
		}
		if got := p.Speed["min"]; got > 1000/lo+0.5 || got < 1000/(hi+1) {
			t.Errorf("k0=%d: decode speed min %v tok/s, server sent %v–%v", k0, got, 1000/hi, 1000/lo)
		}
	}
}
