package bench

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
)

// calls is a Watcher that notes what it was told.
type calls struct {
	mu      sync.Mutex
	begins  int
	planned int
	points  []int
	sent    int
	records int
	done    []metrics.PointSummary
	end     *metrics.Summary
}

func (c *calls) Begin(_ *record.Run, _ time.Time, planned int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.begins, c.planned = c.begins+1, planned
}

func (c *calls) Point(p load.Point) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.points = append(c.points, p.Index)
}

func (c *calls) Sent() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent++
}

func (c *calls) Record(*record.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records++
}

func (c *calls) Sample(*telemetry.Sample) {}
func (c *calls) Verdict(slo.PointVerdict) {}

func (c *calls) PointDone(p metrics.PointSummary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, p)
}

func (c *calls) End(sum *metrics.Summary, _ *slo.Verdict) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.end = sum
}

// A watcher hears of the session, each point, every send and record, and
// ends with the summary summary.json holds.
func TestWatcherSeesTheRun(t *testing.T) {
	url, _ := fastSSE(t)
	cfg := config(t, url, 0, filepath.Join(t.TempDir(), "out"),
		load.Point{Index: 0, Load: record.Load{Concurrency: 1}, Requests: 5},
		load.Point{Index: 1, Load: record.Load{Concurrency: 3}, Requests: 6, WarmupRequests: 2})
	w := &calls{}
	cfg.Watch = w
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.begins != 1 || w.planned != 2 {
		t.Errorf("begins %d with %d planned, want 1 with 2", w.begins, w.planned)
	}
	if len(w.points) != 2 || len(w.done) != 2 || w.done[1].Requests.Completed != 6 {
		t.Errorf("points started %v, ended %d; want 2 and 2 (the second with 6 measured)", w.points, len(w.done))
	}
	if w.sent != 13 || w.records != 13 {
		t.Errorf("sent %d, records %d; want 13 each", w.sent, w.records)
	}
	if w.end != res.Summary {
		t.Error("End was not given the run's summary")
	}
}
