package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// Records files larger than memory. writeBigRun writes a run directory of
// n records as a soak writes them: a closed loop of 1,000 users, 50 tokens
// a request 50 ms apart after a 200 ms first token, in the order they
// ended, sliced by the minute; gzip-compressed when gz.
func writeBigRun(t testing.TB, dir string, n int, gz bool) (size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "records.jsonl"
	if gz {
		name += ".gz"
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	w := record.NewWriter(f)
	if gz {
		w = record.NewGzipWriter(f)
	}
	const users = 1000
	load := record.Load{Concurrency: users}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	next := make([]int64, users) // each user's next send
	for u := range next {
		next[u] = int64(time.Second) + rng.Int64N(int64(time.Millisecond))
	}
	// Users finish in the order of their next send once a request's
	// length is added: a heap is not needed when every request takes
	// about as long, so round-robin over the users is end order.
	var first, last int64 = -1, 0
	for i := range n {
		u := i % users
		sent := next[u]
		r := &record.Record{Schema: record.Schema, Point: 0, Load: load, ID: int64(i), Phase: record.PhaseMeasured,
			API: "openai-chat", Model: "m", PromptTokensRequested: 32, OutputTokensRequested: 50,
			PromptTokens: 32, PromptTokensSource: record.SourceUsage, OutputTokens: 50, OutputTokensSource: record.SourceUsage,
			ScheduledNS: sent, SentNS: sent, FinishReason: "length"}
		at := int64(200*time.Millisecond) + rng.Int64N(int64(5*time.Millisecond))
		for range 50 {
			r.Chunks = append(r.Chunks, record.Chunk{AtNS: at, Tokens: 1})
			at += int64(50*time.Millisecond) + rng.Int64N(int64(time.Millisecond))
		}
		r.FirstTokenNS, r.FirstOutputNS = sent+r.Chunks[0].AtNS, sent+r.Chunks[0].AtNS
		r.EndNS = sent + r.Chunks[49].AtNS
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if first < 0 || sent < first {
			first = sent
		}
		last = max(last, r.EndNS)
		next[u] = r.EndNS + rng.Int64N(int64(100*time.Microsecond))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	run := record.Run{Schema: record.RunSchema, Started: "2026-01-01T00:00:00Z", SliceS: 60,
		Points: []record.PointClient{{Index: 0, Load: load, Span: record.Span{StartNS: first, EndNS: last}, StartedNS: first}}}
	js, _ := json.Marshal(run)
	os.WriteFile(filepath.Join(dir, "run.json"), js, 0o644)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{}\n"), 0o644)
	return st.Size()
}

// reportPeak runs report on dir and returns its peak resident memory.
func reportPeak(t *testing.T, dir string, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"report", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("report %s: %v\n%.2000s", dir, err, out)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// TestReportMemoryDoesNotFollowTheFile: report's peak memory over a
// records file four times larger grows by far less than the file: what it
// keeps per record is bounded, not a copy of what it read.
// SERVEBENCH_BIG_RECORDS=N measures one file of N records instead
// (several GB: docs/PERFORMANCE.md).
func TestReportMemoryDoesNotFollowTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 160 MB of records")
	}
	if v := os.Getenv("SERVEBENCH_BIG_RECORDS"); v != "" {
		bigRecordsMeasure(t, v)
		return
	}
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small"), filepath.Join(dir, "big")
	s1 := writeBigRun(t, small, 20_000, false)
	s2 := writeBigRun(t, big, 80_000, false)
	m1, m2 := reportPeak(t, small, "--json"), reportPeak(t, big, "--json")
	t.Logf("records %d → %d MB, report's peak RSS %d → %d MB", s1>>20, s2>>20, m1>>20, m2>>20)
	if grew := m2 - m1; 3*grew > s2-s1 {
		t.Errorf("report's memory grew by %d MB for %d MB more records: more than a third of the file", grew>>20, (s2-s1)>>20)
	}
}

// bigRecordsMeasure writes a run of n records, plain and compressed, and
// times report --format html on each.
func bigRecordsMeasure(t *testing.T, v string) {
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("SERVEBENCH_BIG_RECORDS=%q: %v", v, err)
	}
	dir := os.Getenv("SERVEBENCH_BIG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, gz := range []bool{false, true} {
		d := filepath.Join(dir, fmt.Sprintf("big-gz-%v", gz))
		t0 := time.Now()
		size := writeBigRun(t, d, n, gz)
		gen := time.Since(t0)
		for _, format := range []string{"text", "html"} {
			cmd := exec.Command(binary, "report", d, "--format", format)
			t1 := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("report: %v\n%.2000s", err, out)
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			wall := time.Since(t1)
			t.Logf("%d records, gzip %v: %.2f GB (written in %v); report --format %s: %v wall, %.1f s CPU, peak RSS %d MB, %.0f MB/s of records",
				n, gz, float64(size)/1e9, gen.Round(time.Second), format, wall.Round(time.Second/10),
				time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(), ru.Maxrss>>10, float64(size)/1e6/wall.Seconds())
		}
		os.RemoveAll(d)
	}
}
