package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// TestProgressShowsTTFTP95: the live line's "TTFT p95" is the p95 of the
// TTFTs seen so far: with TTFTs of 1, 2, ..., 100 ms it reads 95 ms
// (type-7 quantile 95.05), where the median would read 50.
func TestProgressShowsTTFTP95(t *testing.T) {
	var out bytes.Buffer
	pr := newProgress(&out, load.Point{Load: record.Load{Concurrency: 4}, Requests: 100}, time.Now(), false)
	for i := int64(1); i <= 100; i++ {
		pr.add(&record.Record{SentNS: i * 1e6, FirstTokenNS: 2 * i * 1e6, EndNS: 3 * i * 1e6, OutputTokens: 10})
	}
	pr.stop()
	final := out.String()[strings.LastIndex(out.String(), "\r"):]
	if !strings.Contains(final, "100/100 done") || !strings.Contains(final, "TTFT p95 95 ms") {
		t.Errorf("final progress line %q, want 100/100 done and TTFT p95 95 ms", final)
	}
}

// TestProgressLinesForALog: when stderr is a log, progress is a line of
// its own per tick (here 20 ms for 10 s), with no terminal codes, and
// nothing more when the point ends.
func TestProgressLinesForALog(t *testing.T) {
	var out syncBuffer
	pr := startProgress(&out, load.Point{Load: record.Load{Concurrency: 2}, Requests: 10}, time.Now(), true, 20*time.Millisecond)
	pr.add(&record.Record{SentNS: 1e6, FirstTokenNS: 5e6, EndNS: 9e6, OutputTokens: 4})
	for !strings.Contains(out.String(), "1/10 done") {
		time.Sleep(5 * time.Millisecond)
	}
	pr.stop()
	got := out.String()
	if strings.ContainsAny(got, "\r\033") {
		t.Errorf("lines mode wrote terminal codes: %q", got)
	}
	for line := range strings.Lines(got) {
		if !strings.HasSuffix(line, "\n") || !strings.Contains(line, "[point 1 c=2] 1/10 done · TTFT p95 4 ms") {
			t.Errorf("progress line %q, want a whole line with the point's figures", line)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the
// test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgressNamesTheWorkload: in a workload matrix the live line names
// the point's cell beside its load.
func TestProgressNamesTheWorkload(t *testing.T) {
	var out bytes.Buffer
	pr := newProgress(&out, load.Point{Index: 3, Load: record.Load{Workload: "in=128 out=512", Concurrency: 1}, Requests: 2}, time.Now(), false)
	pr.stop()
	if !strings.Contains(out.String(), "[point 4 in=128 out=512 c=1] 0/2 done") {
		t.Errorf("progress line %q", out.String())
	}
}

// TestPromptTokensFallBackToWorkload: when the server reports no usage
// and no local tokenizer counts the prompt, the record keeps the
// workload's own count of the prompt it sent, with its source.
func TestPromptTokensFallBackToWorkload(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t%d\"}]}\n\n", i)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer hs.Close()
	dir := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), config(t, hs.URL, 0, dir, load.Point{Load: record.Load{Concurrency: 1}, Requests: 3}))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, rundir.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := record.NewReader(f)
	for rd.Next() {
		r := rd.Record()
		if r.PromptTokens != 4 || r.PromptTokensSource != record.SourceLocal {
			t.Errorf("record %d: prompt %d tokens from %q, want the workload's 4 from %q", r.ID, r.PromptTokens, r.PromptTokensSource, record.SourceLocal)
		}
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	if got := res.Summary.Points[0].PromptTokensMean; got != 4 {
		t.Errorf("prompt tokens mean %v, want 4", got)
	}
}
