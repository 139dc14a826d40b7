package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

// oomSSE streams like fastSSE but fails every third request the way an
// engine out of GPU memory does.
func oomSSE(t *testing.T) string {
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			http.Error(w, `{"error":"CUDA out of memory. Tried to allocate 2.00 GiB"}`, http.StatusInternalServerError)
			return
		}
		time.Sleep(2 * time.Millisecond) // long enough for a reading or two per point
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"text\":\" t\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// tickSource reads a fixed client figure.
type tickSource struct{ reads atomic.Int64 }

func (s *tickSource) Name() string { return "ticks" }
func (s *tickSource) Read(ctx context.Context, now int64) ([]telemetry.Sample, error) {
	s.reads.Add(1)
	return []telemetry.Sample{{Source: telemetry.KindClient, Client: &telemetry.Client{Goroutines: 1}}}, nil
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readRecords returns each point's records by index.
func readRecords(t *testing.T, path string) map[int][]record.Record {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int][]record.Record{}
	rd := record.NewReader(f)
	for rd.Next() {
		out[rd.Record().Point] = append(out[rd.Record().Point], *rd.Record())
	}
	return out
}

// A session with telemetry writes its samples on the records' clock, each
// point's measured window in run.json, and per point the out-of-memory
// failures among its records as events.
func TestRunTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	cfg := config(t, oomSSE(t), 0, dir,
		load.Point{Index: 0, Load: record.Load{Concurrency: 1}, Requests: 9},
		load.Point{Index: 1, Load: record.Load{Concurrency: 2}, Requests: 12, WarmupRequests: 3})
	src := &tickSource{}
	cfg.Telemetry = &Telemetry{Sources: []telemetry.Source{src}, Interval: 5 * time.Millisecond}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	var run record.Run
	readJSON(t, filepath.Join(dir, rundir.RunFile), &run)
	started, _ := time.Parse(time.RFC3339Nano, run.Started)
	upper := int64(time.Since(started))
	f, err := os.Open(filepath.Join(dir, rundir.TelemetryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, damaged, err := telemetry.ReadSamples(f)
	if err != nil || damaged > 0 || int64(len(samples)) < src.reads.Load() {
		t.Fatalf("telemetry.jsonl: %d samples for %d reads, %d damaged, %v", len(samples), src.reads.Load(), damaged, err)
	}
	for _, s := range samples {
		if s.TNS < 0 || s.TNS > upper {
			t.Errorf("sample at t_ns %d outside the run [0, %d]", s.TNS, upper)
		}
	}
	recs := readRecords(t, filepath.Join(dir, rundir.RecordsFile))
	var sum metrics.Summary
	readJSON(t, filepath.Join(dir, rundir.SummaryFile), &sum)
	for i, pc := range run.Points {
		// the measured window: first send to last end, warm-up excluded
		want := record.Span{StartNS: 1 << 62}
		for _, r := range recs[pc.Index] {
			if r.Phase != record.PhaseWarmup {
				want.StartNS, want.EndNS = min(want.StartNS, r.SentNS), max(want.EndNS, r.EndNS)
			}
		}
		// the out-of-memory failures that ended inside it, a warm-up
		// request's too: an event is a moment of the timeline
		oom := 0
		for _, r := range recs[pc.Index] {
			if r.Error != nil && r.Error.Class == record.ClassOOM && r.EndNS >= want.StartNS && r.EndNS <= want.EndNS {
				oom++
			}
		}
		if pc.Span != want || pc.Span.Empty() {
			t.Errorf("point %d: run.json span %+v, want the records' %+v", pc.Index, pc.Span, want)
		}
		tel := sum.Points[i].Telemetry
		if oom == 0 || tel == nil || tel.Events[telemetry.EventOOM] != oom {
			t.Errorf("point %d: telemetry %+v, want %d oom events", pc.Index, tel, oom)
		}
	}
	// The event lines lead the warnings, a line per kind: a busy machine
	// may add a sampling gap of its own beside the oom line.
	oomLine := slices.IndexFunc(sum.Warnings, func(w string) bool { return strings.HasPrefix(w, "telemetry: 8 oom events") })
	notEvent := func(w string) bool { return !strings.HasPrefix(w, "telemetry: ") }
	if oomLine < 0 || slices.ContainsFunc(sum.Warnings[:oomLine], notEvent) {
		t.Errorf("summary warnings %q, want the oom events among the telemetry lines that lead them", sum.Warnings)
	}
}

// Without telemetry nothing is sampled, even the records' events.
func TestRunWithoutTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	cfg := config(t, oomSSE(t), 0, dir, load.Point{Index: 0, Load: record.Load{Concurrency: 1}, Requests: 6})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.TelemetryFile)); !os.IsNotExist(err) {
		t.Errorf("%s written without telemetry (%v)", rundir.TelemetryFile, err)
	}
	if tel := res.Summary.Points[0].Telemetry; tel != nil {
		t.Errorf("telemetry %+v without telemetry", tel)
	}
}
