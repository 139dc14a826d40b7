package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// Records files larger than memory. writeBigRun writes a run directory of
// n records as a soak writes them: a closed loop of 1,000 users, 50 tokens
// a request 50 ms apart after a 200 ms first token, in the order they
// ended, sliced by the minute; gzip-compressed when gz; one worker of a
// sharded run when shard is set. Runs of another seed start an hour later
// with other times (compare tells them from a copy of one run).
func writeBigRun(t testing.TB, dir string, n int, gz bool, shard *record.RunShard, seed uint64) (size int64) {
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
	rng := rand.New(rand.NewPCG(1+seed, uint64(n)))
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
	started := time.Date(2026, 1, 1, int(seed), 0, 0, 0, time.UTC).Format(time.RFC3339)
	run := record.Run{Schema: record.RunSchema, Started: started, SliceS: 60, Shard: shard,
		Points: []record.PointClient{{Index: 0, Load: load, Span: record.Span{StartNS: first, EndNS: last}, StartedNS: first}}}
	js, _ := json.Marshal(run)
	os.WriteFile(filepath.Join(dir, "run.json"), js, 0o644)
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{}\n"), 0o644)
	return st.Size()
}

// A records file larger than memory, as each reader of records gets it:
// one run, a run killed before its summary (history import rebuilds it
// from the records), the two workers of a sharded run (report merges them),
// two runs of n records each (compare).
type bigLayout int

const (
	bigOneRun bigLayout = iota
	bigKilled
	bigShards
	bigPair
)

// writeBigLayout writes n records laid out as l under dir and returns the
// run directories and the records' size.
func writeBigLayout(t testing.TB, dir string, n int, gz bool, l bigLayout) (dirs []string, size int64) {
	t.Helper()
	switch l {
	case bigShards:
		for i := range 2 {
			d := filepath.Join(dir, fmt.Sprintf("w%d", i))
			size += writeBigRun(t, d, n/2, gz, &record.RunShard{Index: i, Count: 2}, 0)
			dirs = append(dirs, d)
		}
		return dirs, size
	case bigPair:
		for i := range 2 {
			d := filepath.Join(dir, fmt.Sprintf("r%d", i))
			size += writeBigRun(t, d, n, gz, nil, uint64(i))
			dirs = append(dirs, d)
		}
		return dirs, size
	case bigKilled:
		size = writeBigRun(t, dir, n, gz, nil, 0)
		if err := os.Remove(filepath.Join(dir, "summary.json")); err != nil {
			t.Fatal(err)
		}
		return []string{dir}, size
	}
	return []string{dir}, writeBigRun(t, dir, n, gz, nil, 0)
}

// bigReaders are the commands that read records afterwards, each with the
// layout it reads; args gives its arguments for the run directories and a
// history database.
var bigReaders = []struct {
	name   string
	layout bigLayout
	args   func(dirs []string, db string) []string
}{
	{"report --json", bigOneRun, func(d []string, _ string) []string { return []string{"report", d[0], "--json"} }},
	{"report --format html", bigOneRun, func(d []string, _ string) []string { return []string{"report", d[0], "--format", "html"} }},
	{"history import of a killed run", bigKilled, func(d []string, db string) []string { return []string{"history", "import", "--db", db, d[0]} }},
	{"report of a sharded run's workers", bigShards, func(d []string, _ string) []string { return append(append([]string{"report"}, d...), "--json") }},
	{"compare of two runs", bigPair, func(d []string, _ string) []string { return []string{"compare", d[0], d[1], "--json"} }},
}

// readerRun runs the binary and returns its peak resident memory and its
// CPU time.
func readerRun(t *testing.T, args ...string) (peak int64, cpu time.Duration) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%.2000s", args, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru.Maxrss << 10, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadersMemoryDoesNotFollowTheFile: each reader's peak memory over a
// records file four times larger grows by far less than the file: what it
// keeps per record is bounded, not a copy of what it read.
// SERVEBENCH_BIG_RECORDS=N measures each on one file of N records instead
// (several GB: docs/PERFORMANCE.md).
func TestReadersMemoryDoesNotFollowTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 600 MB of records")
	}
	if v := os.Getenv("SERVEBENCH_BIG_RECORDS"); v != "" {
		bigRecordsMeasure(t, v)
		return
	}
	for _, rd := range bigReaders {
		t.Run(rd.name, func(t *testing.T) {
			dir := t.TempDir()
			small, s1 := writeBigLayout(t, filepath.Join(dir, "small"), 20_000, false, rd.layout)
			big, s2 := writeBigLayout(t, filepath.Join(dir, "big"), 80_000, false, rd.layout)
			m1, _ := readerRun(t, rd.args(small, filepath.Join(dir, "small.db"))...)
			m2, _ := readerRun(t, rd.args(big, filepath.Join(dir, "big.db"))...)
			t.Logf("records %d → %d MB, peak RSS %d → %d MB", s1>>20, s2>>20, m1>>20, m2>>20)
			if grew := m2 - m1; 3*grew > s2-s1 {
				t.Errorf("memory grew by %d MB for %d MB more records: more than a third of the file", grew>>20, (s2-s1)>>20)
			}
		})
	}
}

// bigRecordsMeasure writes n records, plain and compressed, in each
// reader's layout, and times the readers on them (those whose name holds
// SERVEBENCH_BIG_READER, when set).
func bigRecordsMeasure(t *testing.T, v string) {
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("SERVEBENCH_BIG_RECORDS=%q: %v", v, err)
	}
	dir := os.Getenv("SERVEBENCH_BIG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	var readers []int
	for i, rd := range bigReaders {
		if strings.Contains(rd.name, os.Getenv("SERVEBENCH_BIG_READER")) {
			readers = append(readers, i)
		}
	}
	for _, gz := range []bool{false, true} {
		for _, l := range []bigLayout{bigOneRun, bigKilled, bigShards, bigPair} {
			if !slices.ContainsFunc(readers, func(i int) bool { return bigReaders[i].layout == l }) {
				continue
			}
			d := filepath.Join(dir, fmt.Sprintf("big-gz-%v-%d", gz, l))
			t0 := time.Now()
			dirs, size := writeBigLayout(t, d, n, gz, l)
			t.Logf("%d records, gzip %v: %.2f GB (written in %v)", n, gz, float64(size)/1e9, time.Since(t0).Round(time.Second))
			for _, i := range readers {
				rd := bigReaders[i]
				if rd.layout != l {
					continue
				}
				t1 := time.Now()
				peak, cpu := readerRun(t, rd.args(dirs, filepath.Join(d, "history.db"))...)
				wall := time.Since(t1)
				t.Logf("  %s: %v wall, %.1f s CPU, peak RSS %d MB, %.0f MB/s of records",
					rd.name, wall.Round(time.Second/10), cpu.Seconds(), peak>>20, float64(size)/1e6/wall.Seconds())
			}
			os.RemoveAll(d)
		}
	}
}
