package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// TestSinkModelTime: against a target running 10× faster than it models,
// records.jsonl keeps the times measured and the point's load as asked,
// while the summary, the objective's observer and live progress see model
// time.
func TestSinkModelTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s, err := newSink(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	s.scale = 10
	asked := load.Point{Index: 0, Load: record.Load{Rate: 2}}
	s.nominal(asked)
	var observed, notified *record.Record
	s.observe = func(r *record.Record) { observed = r }
	s.onEmit(func(r *record.Record) { notified = r })
	// The runner paces the wall-time load (20/s) and stamps it.
	wall := wallPoint(asked, 10)
	if wall.Load.Rate != 20 {
		t.Fatalf("wall load %v, want 20/s", wall.Load)
	}
	s.emit(&record.Record{Point: 0, Load: wall.Load, ID: 1, Phase: record.PhaseMeasured, SentNS: 1e6,
		FirstTokenNS: 3e6, EndNS: 9e6, OutputTokens: 5, Chunks: []record.Chunk{{AtNS: 2e6, Tokens: 1}, {AtNS: 8e6, Tokens: 4}}})
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if line := string(b); !strings.Contains(line, `"sent_ns":1000000,`) || !strings.Contains(line, `"end_ns":9000000`) || !strings.Contains(line, `"rate":2`) {
		t.Errorf("records.jsonl must keep measured times and the asked load: %s", line)
	}
	for name, r := range map[string]*record.Record{"observer": observed, "progress": notified} {
		if r == nil || r.SentNS != 1e7 || r.EndNS != 9e7 || r.Chunks[1].AtNS != 8e7 {
			t.Errorf("%s did not see model time: %+v", name, r)
		}
	}
	p, _ := s.agg.Point(0)
	if v, _ := p.TTFT.Get("p50"); v != 20 {
		t.Errorf("summary TTFT %v ms, want 20 (2 ms measured × 10)", v)
	}
	if p.Load.Rate != 2 {
		t.Errorf("summary load %v, want the 2/s asked", p.Load)
	}
}

func TestWallPoint(t *testing.T) {
	p := load.Point{Load: record.Load{Rate: 3, MaxConcurrency: 4}, Duration: 60 * time.Second, WarmupDuration: 10 * time.Second, Requests: 7}
	got := wallPoint(p, 10)
	want := load.Point{Load: record.Load{Rate: 30, MaxConcurrency: 4}, Duration: 6 * time.Second, WarmupDuration: time.Second, Requests: 7}
	if got.Load != want.Load || got.Duration != want.Duration || got.WarmupDuration != want.WarmupDuration || got.Requests != want.Requests {
		t.Errorf("wallPoint(×10) = %+v, want %+v", got, want)
	}
	closed := load.Point{Load: record.Load{Concurrency: 4}}
	if got := wallPoint(closed, 10); got.Load != closed.Load {
		t.Errorf("a concurrency is not a time: %+v", got.Load)
	}
	if got := wallPoint(p, 1); got.Load != p.Load || got.Duration != p.Duration {
		t.Errorf("scale 1 changed the point: %+v", got)
	}
}
