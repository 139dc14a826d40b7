package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

func checkServer(t *testing.T, chunks int, gap time.Duration) (*server, *httptest.Server) {
	t.Helper()
	s := &server{chunks: chunks, gap: gap, flushes: map[int64][]int64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /flushes", s.dump)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return s, srv
}

// The plain client counts content chunks only, as servebench does: the
// server's finish and usage chunks are data lines that carry no token.
func TestPlainCountsContentChunks(t *testing.T) {
	_, srv := checkServer(t, 7, 0)
	n, _, stamps, err := plainOne(http.DefaultClient, srv.URL+"/v1/chat/completions", []byte(`{}`), false)
	if err != nil || n != 7 || stamps != nil {
		t.Fatalf("got %d chunks, %v stamps, %v; want 7", n, stamps, err)
	}
}

// With a gap, the server logs each chunk's flush under the request number
// its usage reports, and the stamping client reads that number back, so
// every timestamp meets its flush (and follows it).
func TestWriteLogMatchesStamps(t *testing.T) {
	s, srv := checkServer(t, 3, time.Millisecond)
	for want := int64(1); want <= 2; want++ {
		n, id, stamps, err := plainOne(http.DefaultClient, srv.URL+"/v1/chat/completions", []byte(`{}`), true)
		if err != nil || n != 3 || id != want || len(stamps) != 3 {
			t.Fatalf("got %d chunks, id %d, %d stamps, %v; want 3 chunks of request %d", n, id, len(stamps), err, want)
		}
		fl := s.flushes[id]
		for k := range stamps {
			if lag := stamps[k] - fl[k]; lag < 0 || lag > int64(time.Second) {
				t.Errorf("request %d chunk %d: stamp %d ns after its flush", id, k, lag)
			}
		}
	}
	resp, err := http.Get(srv.URL + "/flushes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[int64][]int64
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || len(m) != 2 || len(m[2]) != 3 {
		t.Errorf("flush log %v, %v", m, err)
	}
}

func TestAchievedRate(t *testing.T) {
	t0 := time.Unix(100, 0)
	var sends []time.Time
	for i := range 11 {
		sends = append(sends, t0.Add(time.Duration(10-i)*100*time.Millisecond)) // out of order
	}
	if got := achievedRate(sends); got != 10 {
		t.Errorf("got %v req/s, want 10", got)
	}
	if got := achievedRate(sends[:1]); got != 0 {
		t.Errorf("one send: got %v", got)
	}
}

func TestSpread(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want string
	}{
		{[]float64{0.9, 0.7, 1.1}, "median 0.90x (0.70–1.10 over 3)"},
		{[]float64{1, 0.8}, "median 0.90x (0.80–1.00 over 2)"},
		{nil, "none"},
	} {
		if got := spread(tt.xs); got != tt.want {
			t.Errorf("spread(%v) = %q, want %q", tt.xs, got, tt.want)
		}
	}
}

// TestReadRunAsReportDoes: the check reads a run directory as servebench
// report does: compressed records (run --compress gzip) as plain ones, a
// damaged line skipped, a repeated record dropped.
func TestReadRunAsReportDoes(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	w := record.NewGzipWriter(&buf)
	for i := range 3 {
		w.Write(&record.Record{Schema: record.Schema, ID: int64(i), Phase: record.PhaseMeasured, SentNS: int64(i+1) * 1e6, EndNS: int64(i+2) * 1e6})
	}
	w.Write(&record.Record{Schema: record.Schema, ID: 2, Phase: record.PhaseMeasured, SentNS: 1e9, EndNS: 2e9})
	w.Close()
	os.WriteFile(filepath.Join(dir, rundir.RecordsGzipFile), buf.Bytes()[:buf.Len()-4], 0o644) // cut short: a killed run
	os.WriteFile(filepath.Join(dir, rundir.RunFile), []byte(`{"schema":"servebench.run/v1","started":"2026-12-01T09:00:00Z"}`), 0o644)
	d, err := readRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Requests != 3 || d.Window != 3*time.Millisecond {
		t.Errorf("%d requests over %v, want 3 over 3ms: the repeated record dropped", d.Requests, d.Window)
	}
}
