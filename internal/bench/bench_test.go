package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/workload"
)

// countSource yields fixed items and fails after limit items (0: never).
type countSource struct {
	n, limit int
}

func (c *countSource) Next(ctx context.Context) (workload.Item, error) {
	if c.limit > 0 && c.n >= c.limit {
		return workload.Item{}, errors.New("dataset exhausted at line 3")
	}
	c.n++
	return workload.Item{Prompt: fmt.Sprint("p", c.n), Want: 4, Tokens: 4, Source: record.SourceLocal, MaxTokens: 3}, nil
}

func fastSSE(t *testing.T) (string, *atomic.Int64) {
	var hits atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t%d\"}]}\n\n", i)
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(hs.Close)
	return hs.URL, &hits
}

func config(t *testing.T, url string, limit int, dir string, points ...load.Point) Config {
	c, err := backend.New(backend.Options{BaseURL: url, API: record.APIOpenAICompletions, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Client:    c,
		NewSource: func(load.Point) workload.Source { return &countSource{limit: limit} },
		Run:       record.Run{Schema: record.RunSchema, Target: record.Target{API: record.APIOpenAICompletions, Model: "m"}},
		Points:    points, OutDir: dir,
	}
}

func lines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestRunWritesEveryRecordAndFile(t *testing.T) {
	url, hits := fastSSE(t)
	dir := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), config(t, url, 0, dir,
		load.Point{Index: 0, Load: record.Load{Concurrency: 1}, Requests: 5},
		load.Point{Index: 1, Load: record.Load{Concurrency: 3}, Requests: 6, WarmupRequests: 2}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 13 || hits.Load() != 13 || lines(t, filepath.Join(dir, rundir.RecordsFile)) != 13 {
		t.Errorf("records %d, server hits %d, lines %d; want 13", res.Records, hits.Load(), lines(t, filepath.Join(dir, rundir.RecordsFile)))
	}
	for _, f := range []string{rundir.RunFile, rundir.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	p := res.Summary.Points
	if len(p) != 2 || p[0].Requests.Completed != 5 || p[1].Requests.Completed != 6 || p[1].Warmup.Count != 2 {
		t.Errorf("summary points: %+v", p)
	}
	if p[0].PromptTokensMean != 4 || p[0].OutputTokensMean != 3 {
		t.Errorf("token means %v %v", p[0].PromptTokensMean, p[0].OutputTokensMean)
	}
}

func TestWorkloadFailingBeforeAnySend(t *testing.T) {
	url, hits := fastSSE(t)
	dir := filepath.Join(t.TempDir(), "out")
	cfg := config(t, url, 0, dir, load.Point{Load: record.Load{Concurrency: 1}, Requests: 2})
	cfg.NewSource = func(load.Point) workload.Source { return failFirst{} }
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "preparing requests") {
		t.Fatalf("want a preparation error, got %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests sent by a workload that had none", hits.Load())
	}
}

type failFirst struct{}

func (failFirst) Next(context.Context) (workload.Item, error) {
	return workload.Item{}, errors.New("no prompt fits the context")
}

// A workload that fails midway keeps every record already made and says
// why the point stopped.
func TestWorkloadFailingMidwayKeepsRecords(t *testing.T) {
	url, _ := fastSSE(t)
	dir := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), config(t, url, 3, dir, load.Point{Load: record.Load{Concurrency: 1}, Requests: 10}))
	if err == nil || !strings.Contains(err.Error(), "dataset exhausted") {
		t.Fatalf("want the source's error, got %v", err)
	}
	if res == nil || res.Summary.Points[0].Requests.Completed != 3 {
		t.Fatalf("want the 3 completed requests summarised, got %+v", res)
	}
	if n := lines(t, filepath.Join(dir, rundir.RecordsFile)); n < 3 {
		t.Errorf("%d records on disk, want at least 3", n)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Errorf("summary not written after a workload failure: %v", err)
	}
}

func TestOpenRefusesAUsedDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, rundir.RecordsFile), []byte("{}\n"), 0o644)
	if _, err := Open(Config{OutDir: dir}); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rundir.RecordsFile)); string(b) != "{}\n" {
		t.Error("existing records were touched")
	}
}

// An objective's closed-loop probes are held at steady state: several
// requests per user, whatever --requests says.
func TestSteadyPointSize(t *testing.T) {
	tests := []struct {
		name string
		p    load.Point
		want int
	}{
		{"closed loop raised to 8 per user", load.Point{Load: record.Load{Concurrency: 64}, Requests: 10}, 512},
		{"closed loop already enough", load.Point{Load: record.Load{Concurrency: 2}, Requests: 100}, 100},
		{"open loop keeps its count", load.Point{Load: record.Load{Rate: 4.5}, Requests: 20}, 20},
		{"a duration bounds the point", load.Point{Load: record.Load{Concurrency: 64}, Duration: time.Minute}, 0},
	}
	for _, tt := range tests {
		if got := steady(tt.p).Requests; got != tt.want {
			t.Errorf("%s: %d requests, want %d", tt.name, got, tt.want)
		}
	}
}
