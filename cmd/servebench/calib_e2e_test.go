package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
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
// first chunk bundles 2 and 3 tokens. The definition is held exactly, with
// no clock in it: every record's first chunk carries the k0 tokens the
// server put there, and summary.json's TPOT and decode speed are the
// records' (end − first token)/(n − k0), where counting n − 1 tokens would
// read 12.5% or 25% fast. The client's clock is then held to the server's:
// a request's TPOT is what the server sent, moved at most by how late the
// client read its first and last chunks (calibReadStall) over the n − k0
// gaps between them. Under two CPU burners the client once read a last
// chunk 7 ms late, which the former 1 ms-per-token margin over 7 gaps of
// 15 ms could not hold, and under four it read a first chunk 51 ms late.
// The definition no longer rests on that margin; the gaps are 40 ms so
// that the stall budget still keeps the timing check well inside what a
// client that buffered the stream would read (whole gaps off).
func TestCalibFirstChunkDecodeSpeed(t *testing.T) {
	for _, k0 := range []int{2, 3} {
		s := &calibBundleServer{first: k0, tokens: 9, gap: 40 * time.Millisecond}
		srv := httptest.NewServer(s)
		dir := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := run(t, "run", "--url", srv.URL, "--model", "m", "--concurrency", "1",
			"--requests", "3", "--output-tokens", "9", "--tokenizer", "cl100k_base", "--out", dir, "--json")
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
		tpot := calibRecordTPOT(t, filepath.Join(dir, "records.jsonl"), k0, s.tokens)
		p := sum.Points[0]
		if got, want := p.TPOT["max"], slices.Max(tpot); math.Abs(got-want) > 1e-6*want {
			t.Errorf("k0=%d: tpot max %v ms, the records' (end − first token)/(n − k0) %v", k0, got, want)
		}
		if got, want := p.Speed["min"], 1000/slices.Max(tpot); math.Abs(got-want) > 1e-6*want {
			t.Errorf("k0=%d: decode speed min %v tok/s, the records' 1000/TPOT %v", k0, got, want)
		}
		s.mu.Lock()
		lo, hi := slices.Min(s.tpot), slices.Max(s.tpot)
		s.mu.Unlock()
		margin := float64(calibReadStall) / 1e6 / float64(s.tokens-k0)
		for _, v := range tpot {
			if v < lo-margin || v > hi+margin {
				t.Errorf("k0=%d: a request's tpot %v ms, server sent %v–%v (± %.1f ms for the client's read delays)", k0, v, lo, hi, margin)
			}
		}
	}
}

// calibReadStall bounds how late a busy two-core machine lets the client
// read a chunk the server flushed (its process descheduled for a few
// scheduler periods), and so the client's error on a request's timeline.
const calibReadStall = 60 * time.Millisecond

// calibRecordTPOT checks each measured record's chunks against what the
// server sent (k0 tokens, then one per chunk) and returns its TPOT by the
// definition in docs/METRICS.md, in ms.
func calibRecordTPOT(t *testing.T, path string, k0, tokens int) []float64 {
	t.Helper()
	var out []float64
	for _, r := range cliRecords(t, path) {
		if r.Phase != record.PhaseMeasured {
			continue
		}
		if len(r.Chunks) != tokens-k0+1 || r.Chunks[0].Tokens != k0 || r.OutputTokens != tokens {
			t.Fatalf("record %d: %d chunks, first with %d tokens, %d in all; the server sent %d chunks, %d tokens first, %d in all",
				r.ID, len(r.Chunks), r.Chunks[0].Tokens, r.OutputTokens, tokens-k0+1, k0, tokens)
		}
		out = append(out, float64(r.EndNS-r.FirstTokenNS)/1e6/float64(tokens-k0))
	}
	if len(out) != 3 {
		t.Fatalf("%d measured records, want 3", len(out))
	}
	return out
}
