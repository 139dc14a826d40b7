package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

func f64(v float64) *float64 { return &v }

// testEntry is a run of two closed-loop points started at started.
func testEntry(started, url, model string) *Entry {
	run := &record.Run{Schema: record.RunSchema, Version: "v1.2.3", Started: started, Ended: started,
		Target: record.Target{URL: url, API: "openai-chat", Model: model, Server: map[record.ServerKey]string{
			"model_id": model + "-id", "runtime": "vllm", "runtime_version": "0.6.3", "max_model_len": "8192", "quantization": "bf16"}},
		PromptTokens: "512", OutputTokens: "128", Seed: 1, Args: []string{"run", "--concurrency", "1,4"}}
	e := &Entry{Run: run, Dir: "/runs/" + started}
	for i, c := range []int{1, 4} {
		p := metrics.PointSummary{Index: i, Load: record.Load{Concurrency: c}, OutputTPS: 100 * float64(c), ErrorRate: 0.01 * float64(i)}
		p.Requests.Completed, p.Requests.Failed = 10*c, i
		p.TTFT = stats.Dist{P50: f64(20 * float64(c)), P95: f64(40 * float64(c)), Count: 10}
		p.DecodeTPSReq = stats.Dist{P50: f64(50 / float64(c)), Count: 10}
		e.Points = append(e.Points, p)
	}
	return e
}

func open(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func put(t *testing.T, db *DB, e *Entry) int64 {
	t.Helper()
	id, _, err := db.Put(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A run comes back as it was stored: its context, labels, objective
// verdict and each point's headline figures, summary and verdict.
func TestPutGet(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "h.db"))
	e := testEntry("2026-12-01T07:00:00.5Z", "http://127.0.0.1:8000", "llama")
	e.Run.Labels = map[string]string{"team": "infra"}
	e.Objective = json.RawMessage(`{"name":"chat","quantization":"q4_K_M","slos":[]}`)
	e.Verdict = &slo.Verdict{Holds: false, Text: "does not hold", Inconclusive: true, Conclusion: slo.ConclusionInconclusive,
		Points: []slo.PointVerdict{{Load: record.Load{Concurrency: 1}, Points: []int{0}, Pass: true}, {Load: record.Load{Concurrency: 4}, Points: []int{1}}}}
	e.Points[1].Telemetry = &telemetry.Point{GPUs: []telemetry.GPUPoint{{Instance: "nvml", Index: 0, Name: "NVIDIA H100", Driver: "550.54.15"}, {Instance: "nvml", Index: 1, Name: "NVIDIA H100", Driver: "550.54.15"}}}
	id := put(t, db, e)
	d, err := db.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	f := false
	want := Run{ID: id, Started: e.Run.Started, Ended: e.Run.Ended, Stored: d.Stored, Dir: e.Dir, ToolVersion: "v1.2.3",
		Target: "http://127.0.0.1:8000", API: "openai-chat", Model: "llama",
		Server:       Server{ModelID: "llama-id", Runtime: "vllm", RuntimeVersion: "0.6.3", MaxContext: 8192},
		Quantization: "q4_K_M", GPU: "2× NVIDIA H100", GPUCount: 2, GPUDriver: "550.54.15",
		Labels: map[string]string{"team": "infra", "model": "llama", "model_id": "llama-id", "quantization": "q4_K_M",
			"runtime": "vllm", "runtime_version": "0.6.3", "gpu": "2× NVIDIA H100"},
		WorkloadHash: d.WorkloadHash, ObjectiveName: "chat", ObjectiveHash: d.ObjectiveHash, Holds: &f,
		Conclusion: slo.ConclusionInconclusive, Verdict: "does not hold", Flags: []string{"run", "--concurrency", "1,4"}}
	got := d.Run
	got.Points = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if len(d.Points) != 2 || d.Points[1].OutputTPS != 400 || *d.Points[1].TTFTP95MS != 160 || d.Points[1].ITLP95MS != nil ||
		*d.Points[0].Pass != true || *d.Points[1].Pass != false || d.Points[1].Completed != 40 || d.Points[1].Failed != 1 {
		t.Errorf("points: %+v", d.Points)
	}
	var ps metrics.PointSummary
	if err := json.Unmarshal(d.Points[1].Summary, &ps); err != nil || ps.OutputTPS != 400 || ps.Telemetry == nil {
		t.Errorf("summary of point 1: %s (%v)", d.Points[1].Summary, err)
	}
	if string(d.Objective) != `{"name":"chat","quantization":"q4_K_M","slos":[]}` || d.WorkloadHash == "" || d.ObjectiveHash == "" {
		t.Errorf("objective %s, hashes %q %q", d.Objective, d.WorkloadHash, d.ObjectiveHash)
	}
}

// Storing the same run again (an import of its directory, or of a copy
// elsewhere) replaces it in place: one row, the same id, the latest
// directory.
func TestPutSameRunReplaces(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "h.db"))
	e := testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")
	id := put(t, db, e)
	e.Dir = "/elsewhere"
	e.Points = e.Points[:1]
	id2, replaced, err := db.Put(context.Background(), e)
	if err != nil || id2 != id || !replaced {
		t.Fatalf("second put: id %d (first %d), replaced %v, err %v", id2, id, replaced, err)
	}
	runs, err := db.List(context.Background(), Filter{})
	if err != nil || len(runs) != 1 || runs[0].Dir != "/elsewhere" || len(runs[0].Points) != 1 {
		t.Fatalf("after two puts: %+v, %v", runs, err)
	}
	other := testEntry("2026-12-01T07:00:00.000000001Z", "builtin:sim", "m")
	if id3 := put(t, db, other); id3 == id {
		t.Errorf("another run (1 ns later) got the same id %d", id3)
	}
}

// Each filter selects the runs it names; runs come newest first.
func TestListFilters(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "h.db"))
	a := testEntry("2026-11-01T10:00:00Z", "http://gpu-a:8000", "llama-8b")
	b := testEntry("2026-11-15T10:00:00Z", "http://gpu-b:8000", "qwen-7b")
	b.Run.Labels = map[string]string{"gpu": "L4"}
	c := testEntry("2026-12-01T10:00:00Z", "builtin:sim", "sim-model")
	c.Run.Target.Server = map[record.ServerKey]string{record.ServerQuantization: "q8_0"}
	ida, idb, idc := put(t, db, a), put(t, db, b), put(t, db, c)
	day := func(s string) time.Time { v, _ := time.Parse(time.DateOnly, s); return v }
	for _, tc := range []struct {
		name string
		f    Filter
		want []int64
	}{
		{"all, newest first", Filter{}, []int64{idc, idb, ida}},
		{"limit", Filter{Limit: 2}, []int64{idc, idb}},
		{"target part, any case", Filter{Target: "GPU-"}, []int64{idb, ida}},
		{"model name", Filter{Model: "llama"}, []int64{ida}},
		{"server's model id", Filter{Model: "qwen-7b-id"}, []int64{idb}},
		{"user label", Filter{Labels: map[string]string{"gpu": "L4"}}, []int64{idb}},
		{"derived label", Filter{Labels: map[string]string{"quantization": "q8_0"}}, []int64{idc}},
		{"two labels, both must match", Filter{Labels: map[string]string{"quantization": "bf16", "gpu": "L4"}}, []int64{idb}},
		{"label value differs", Filter{Labels: map[string]string{"gpu": "H100"}}, []int64{}},
		{"since", Filter{Since: day("2026-11-15")}, []int64{idc, idb}},
		{"until is exclusive", Filter{Until: day("2026-11-15").Add(10 * time.Hour)}, []int64{ida}},
		{"range", Filter{Since: day("2026-11-02"), Until: day("2026-11-30")}, []int64{idb}},
	} {
		runs, err := db.List(context.Background(), tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := []int64{}
		for _, r := range runs {
			got = append(got, r.ID)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The workload hash is the workload's, not the run's: another seed keeps
// it, another length changes it, and the struct a run holds hashes as the
// JSON read back from its run.json.
func TestWorkloadHash(t *testing.T) {
	h := func(e *Entry) string {
		_, s, err := e.workload()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")
	base.Run.Workload = struct {
		Dataset string `json:"dataset"`
		Order   string `json:"order"`
	}{"chat.jsonl", "random"}
	seed := testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")
	seed.Run.Seed, seed.Run.Workload = 7, map[string]any{"order": "random", "dataset": "chat.jsonl"}
	longer := testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")
	longer.Run.PromptTokens, longer.Run.Workload = "2048", seed.Run.Workload
	if h(base) != h(seed) {
		t.Errorf("seed or key order changed the workload hash: %s vs %s", h(base), h(seed))
	}
	if h(base) == h(longer) {
		t.Errorf("prompt tokens 512 and 2048 hash alike")
	}
}

// The id → run directory lookup compare uses.
func TestDir(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "h.db"))
	e := testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")
	id := put(t, db, e)
	noDir := testEntry("2026-12-01T08:00:00Z", "builtin:sim", "m")
	noDir.Dir = ""
	id2 := put(t, db, noDir)
	for _, tc := range []struct {
		id      int64
		want    string
		missing bool
	}{{id, e.Dir, false}, {id2, "", false}, {999, "", true}} {
		got, err := db.Dir(context.Background(), tc.id)
		if got != tc.want || errors.Is(err, ErrNotFound) != tc.missing {
			t.Errorf("Dir(%d) = %q, %v; want %q (missing %v)", tc.id, got, err, tc.want, tc.missing)
		}
	}
	if _, err := db.Get(context.Background(), 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(999): %v, want ErrNotFound", err)
	}
}

// A run without a start time cannot be told apart from others, so it is
// refused, and nothing is stored.
func TestPutRefusesRunWithoutStart(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "h.db"))
	e := testEntry("", "builtin:sim", "m")
	if _, _, err := db.Put(context.Background(), e); err == nil {
		t.Fatal("a run without a start time was stored")
	}
	if _, _, err := db.Put(context.Background(), &Entry{}); err == nil {
		t.Fatal("an entry without run.json was stored")
	}
}

func TestDefaultPath(t *testing.T) {
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/servebench/history.db"},
		{"linux", map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/share/servebench/history.db"}, // the spec ignores a relative one
		{"linux", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/servebench/history.db"},
		{"darwin", map[string]string{"HOME": "/Users/u"}, "/Users/u/Library/Application Support/servebench/history.db"},
		{"darwin", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/Users/u"}, "/xdg/servebench/history.db"},
		{"windows", map[string]string{"LocalAppData": "/appdata"}, "/appdata/servebench/history.db"},
		{"linux", map[string]string{}, ""},
	} {
		got, err := DefaultPath(tc.goos, func(k string) string { return tc.env[k] })
		if got != filepath.FromSlash(tc.want) || (err != nil) != (tc.want == "") {
			t.Errorf("%s %v: %q, %v; want %q", tc.goos, tc.env, got, err, tc.want)
		}
	}
}

// Writers in one process, each with its own handle as separate commands
// would have, all land: none is lost to a lock.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			db, err := Open(context.Background(), path, Options{})
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			for i := range each {
				e := testEntry(fmt.Sprintf("2026-12-01T07:%02d:%02dZ", w, i), "builtin:sim", "m")
				if _, _, err := db.Put(context.Background(), e); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db := open(t, path)
	runs, err := db.List(context.Background(), Filter{})
	if err != nil || len(runs) != writers*each {
		t.Fatalf("%d runs stored (%v), want %d", len(runs), err, writers*each)
	}
	checkIntegrity(t, db)
}

func checkIntegrity(t *testing.T, db *DB) {
	t.Helper()
	var ok string
	if err := db.db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q, %v", ok, err)
	}
}
