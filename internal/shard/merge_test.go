package shard

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// mark is the start mark of the test runs.
var mark = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// worker writes a worker's run directory: its epoch lead before the mark,
// its first point started late after the mark, and n measured requests of
// 100 ms, one every 10 ms from its point start.
type worker struct {
	index, count int
	lead, late   time.Duration
	n            int
	unfinished   bool
	seed         uint64
}

func (w worker) write(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, "w"+string(rune('0'+w.index)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	started := int64(w.lead + w.late) // the point's start on the worker's clock
	load := record.Load{Concurrency: 4}
	pc := record.PointClient{Index: 0, Load: load, StartedNS: started, StartMark: mark.Format(time.RFC3339Nano),
		Client: record.ClientStats{Sent: w.n, CPUPercent: float64(10 * (w.index + 1)), CPUSeconds: 0.1}}
	var recs strings.Builder
	for i := range w.n {
		sent := started + int64(i)*int64(10*time.Millisecond)
		r := record.Record{Schema: record.Schema, ID: int64(i), Point: 0, Load: load, Phase: record.PhaseMeasured,
			ScheduledNS: sent, SentNS: sent, FirstTokenNS: sent + 2e7, EndNS: sent + 1e8, OutputTokens: 5, PromptTokens: 8,
			Chunks: []record.Chunk{{AtNS: 2e7, Tokens: 1}, {AtNS: 1e8, Tokens: 4}}}
		pc.Span.Add(&r)
		b, _ := json.Marshal(r)
		recs.Write(append(b, '\n'))
	}
	run := record.Run{Schema: record.RunSchema, Started: mark.Add(-w.lead).Format(time.RFC3339Nano), Seed: w.seed,
		Target: record.Target{URL: "http://x:1", API: "openai-completions", Model: "m"}, PromptTokens: "8", OutputTokens: "5",
		Shard: &record.RunShard{Index: w.index, Count: w.count}, StartAt: mark.Format(time.RFC3339Nano), ClientCPUs: 2,
		Points: []record.PointClient{pc}}
	if !w.unfinished {
		run.Ended = mark.Add(time.Minute).Format(time.RFC3339Nano)
	}
	writeFile(t, filepath.Join(dir, "records.jsonl"), recs.String())
	b, _ := json.Marshal(run)
	writeFile(t, filepath.Join(dir, "run.json"), string(b))
	if !w.unfinished {
		writeFile(t, filepath.Join(dir, "summary.json"), "{}")
	}
	return dir
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, dirs ...string) []*Worker {
	t.Helper()
	var ws []*Worker
	for _, d := range dirs {
		w, err := Read(d)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	return ws
}

// TestMergeOneClock: two workers whose epochs lie 3 s and 1 s before the
// mark, each starting its point at the mark, merge onto one clock: the
// point's window is that of both together (200 ms of sends + 100 ms), not
// 2 s wide, and every record counts once.
func TestMergeOneClock(t *testing.T) {
	root := t.TempDir()
	a := worker{index: 1, count: 2, lead: 3 * time.Second, n: 20}.write(t, root)
	b := worker{index: 0, count: 2, lead: time.Second, late: 2 * time.Millisecond, n: 20}.write(t, root)
	s, err := Merge(readAll(t, a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Points[0]
	if p.Requests.Completed != 40 {
		t.Errorf("completed %d, want 40", p.Requests.Completed)
	}
	// Sends from 0 (worker 1) and 2 ms (worker 0) to 192 ms, each 100 ms.
	if p.DurationS < 0.29 || p.DurationS > 0.295 {
		t.Errorf("window %.3f s, want 0.292: the workers' records are not on one clock", p.DurationS)
	}
	if s.Run.Shard != nil || s.Run.Started != mark.Format(time.RFC3339Nano) || len(s.Run.Workers) != 2 {
		t.Fatalf("merged run: shard %v, started %q, %d workers", s.Run.Shard, s.Run.Started, len(s.Run.Workers))
	}
	w0, w1 := s.Run.Workers[0], s.Run.Workers[1]
	if w0.Index != 0 || w0.StartOffsetMS != 2 || w1.StartOffsetMS != 0 || w0.Records != 20 {
		t.Errorf("workers: %+v %+v; want worker 0 2 ms after the mark, worker 1 on it", w0, w1)
	}
	c := s.Run.Points[0].Client
	if c.Sent != 40 || c.CPUPercent != 20 || c.CPUSeconds < 0.19 {
		t.Errorf("merged client %+v: want sent added up, the worst CPU share", c)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "began it") {
			t.Errorf("2 ms apart on a 292 ms window is under 10 ms: %q", w)
		}
	}
}

// TestMergeStartSpread: a worker 50 ms late on a 292 ms window is named.
func TestMergeStartSpread(t *testing.T) {
	root := t.TempDir()
	a := worker{index: 0, count: 2, lead: time.Second, n: 20}.write(t, root)
	b := worker{index: 1, count: 2, lead: time.Second, late: 50 * time.Millisecond, n: 20}.write(t, root)
	s, err := Merge(readAll(t, a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0], "c=4: worker 1 began it 50ms after worker 0") {
		t.Errorf("warnings %q: want worker 1 named 50 ms late", s.Warnings)
	}
}

func TestMergeRefuses(t *testing.T) {
	root := t.TempDir()
	w0 := worker{index: 0, count: 3, n: 2}.write(t, filepath.Join(root, "a"))
	w1 := worker{index: 1, count: 3, n: 2, unfinished: true}.write(t, filepath.Join(root, "a"))
	w2 := worker{index: 2, count: 3, n: 2}.write(t, filepath.Join(root, "a"))
	otherSeed := worker{index: 2, count: 3, n: 2, seed: 9}.write(t, filepath.Join(root, "b"))
	twice := worker{index: 0, count: 3, n: 2}.write(t, filepath.Join(root, "c"))
	tests := []struct {
		name string
		dirs []string
		want string
	}{
		{"another run", []string{w0, w1, otherSeed}, otherSeed + " is not a worker of the same run as " + w0 + ": seed 9, not 0"},
		{"the same worker twice", []string{w0, twice, w2}, "both worker 0 of 3"},
		{"missing and unfinished", []string{w0, w1}, "worker 2 of 3 missing (no directory given); worker 1 (" + w1 + ") did not finish"},
	}
	for _, tt := range tests {
		_, err := Merge(readAll(t, tt.dirs...), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error saying %q", tt.name, err, tt.want)
		}
	}
	_, err := Merge(readAll(t, w0, w1), Options{})
	if ie := (*IncompleteError)(nil); !errors.As(err, &ie) || len(ie.Missing) != 1 || len(ie.Failed) != 1 {
		t.Errorf("%v: want an IncompleteError with one missing and one failed worker", err)
	}
	s, err := Merge(readAll(t, w0, w1), Options{Partial: true})
	if err != nil || !strings.HasPrefix(s.Warnings[0], "partial merge: worker 2 of 3 missing") || s.Points[0].Requests.Completed != 4 {
		t.Errorf("--partial: %v, warnings %q; want the two workers' 4 requests and the rest named first", err, s.Warnings)
	}
	// The merged run.json alone says it again (report of a merged directory).
	if w := Warnings(s.Run); len(w) == 0 || w[0] != s.Warnings[0] {
		t.Errorf("the merged run's own warnings %q, want %q first", w, s.Warnings[0])
	}
}

func TestReadNotShard(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "run.json"), `{"schema":"servebench.run/v1","started":"2026-12-01T09:00:00Z"}`)
	if _, err := Read(dir); !errors.Is(err, ErrNotShard) {
		t.Errorf("a run without a shard: %v, want ErrNotShard", err)
	}
	if _, err := Read(filepath.Join(dir, "nothing")); err == nil || errors.Is(err, ErrNotShard) {
		t.Errorf("a directory without run.json: %v, want an error of its own", err)
	}
}

// TestReadWorkersRefusesSeparateRuns: directories of runs of their own
// among the workers are an error naming them, and a worker if one was
// given.
func TestReadWorkersRefusesSeparateRuns(t *testing.T) {
	root := t.TempDir()
	w := worker{index: 0, count: 2, lead: time.Second, n: 3}.write(t, root)
	var runs []string
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "run.json"), `{"schema":"servebench.run/v1","started":"2026-12-01T09:00:00Z"}`)
		runs = append(runs, dir)
	}
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		// two runs, no worker: separate runs
		{runs, runs[0] + ", " + runs[1] + " are separate runs"},
		// a worker and a run: the run is named beside the worker
		{[]string{w, runs[1]}, runs[1] + " are not workers of a sharded run, as " + w + " is"},
	} {
		_, err := ReadWorkers(tc.dirs)
		if se, ok := errors.AsType[*SeparateError](err); !ok || se.Error() != tc.want {
			t.Errorf("%q: %v, want a *SeparateError %q", tc.dirs, err, tc.want)
		}
	}
	if ws, err := ReadWorkers([]string{w}); err != nil || len(ws) != 1 {
		t.Errorf("one worker: %d workers, %v; want it read", len(ws), err)
	}
}

// TestMergeRecords: the merged records are on one clock, as measured, each
// with an id of its own.
func TestMergeRecords(t *testing.T) {
	root := t.TempDir()
	a := worker{index: 0, count: 2, lead: time.Second, n: 3}.write(t, root)
	b := worker{index: 1, count: 2, lead: 3 * time.Second, late: 5 * time.Millisecond, n: 3}.write(t, root)
	var sent []int64
	ids := map[int64]bool{}
	_, err := Merge(readAll(t, b, a), Options{Records: func(r *record.Record) error {
		sent, ids[r.ID] = append(sent, r.SentNS), true
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	// On the merged clock the mark is 0: worker 0 sends at 0, 10, 20 ms,
	// worker 1 at 5, 15, 25 ms.
	want := []int64{0, 1e7, 2e7, 5e6, 15e6, 25e6}
	if len(sent) != 6 || len(ids) != 6 {
		t.Fatalf("%d records, %d ids; want 6 of each", len(sent), len(ids))
	}
	for i := range want {
		if sent[i] != want[i] {
			t.Errorf("record %d sent at %d ns, want %d", i, sent[i], want[i])
		}
	}
}

// TestReadDamagedRunJSON: a worker's damaged run.json is taken from its
// summary.json as every reader of a run directory takes it, and the merged
// summary says so; a killed worker's (no summary.json) cannot say which
// worker it was, and is refused naming the file.
func TestReadDamagedRunJSON(t *testing.T) {
	root := t.TempDir()
	a := worker{index: 0, count: 2, lead: time.Second, n: 3}.write(t, root)
	b := worker{index: 1, count: 2, lead: 3 * time.Second, n: 3}.write(t, root)
	run, err := rundir.ReadRun(b)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := json.Marshal(map[string]any{"run": run})
	writeFile(t, filepath.Join(b, rundir.SummaryFile), string(sum))
	writeFile(t, filepath.Join(b, rundir.RunFile), `{"schema":"servebench.run/v1","sha`)
	s, err := Merge(readAll(t, a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool {
		return strings.Contains(w, filepath.Join(b, rundir.RunFile)+" is damaged") && strings.Contains(w, "taken from summary.json")
	}) {
		t.Errorf("warnings %q: want worker 1's run.json named as damaged and taken from summary.json", s.Warnings)
	}
	if got := s.Points[0].Requests.Completed; got != 6 {
		t.Errorf("%d requests completed, want both workers' 6", got)
	}
	os.Remove(filepath.Join(b, rundir.SummaryFile))
	if _, err := Read(b); !errors.Is(err, record.ErrRunDamaged) {
		t.Errorf("a killed worker's damaged run.json: %v, want it refused as damaged", err)
	}
}
