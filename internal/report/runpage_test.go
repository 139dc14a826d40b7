package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// pageRecords writes 40 requests at concurrency 4, their first tokens
// ttftMS after the send, as a records file of its own directory.
func pageRecords(t *testing.T, ttftMS float64) string {
	t.Helper()
	var b bytes.Buffer
	w := record.NewWriter(&b)
	for i := range 40 {
		if err := w.Write(compareReq(0, record.Load{Concurrency: 4}, i, float64(i)*10, ttftMS, 5, 8)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), rundir.RecordsFile)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadRunsJudgesEachRun: every run is read for the page with its
// curves, judged against the objective given; the report returned is the
// first run the objective does not hold for, and a run that cannot be
// read is the error.
func TestLoadRunsJudgesEachRun(t *testing.T) {
	fast, slow, slower := pageRecords(t, 50), pageRecords(t, 500), pageRecords(t, 900)
	ttft, err := slo.Parse("ttft p95 <= 100ms")
	if err != nil {
		t.Fatal(err)
	}
	o := &slo.Objective{Name: "snappy", Priority: slo.PriorityResponsiveness}
	o.SetSLO(ttft)
	runs, unmet, err := LoadRuns([]string{fast, slow, slower}, nil, rundir.Options{}, o, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].Curves == nil || runs[0].Verdict == nil || !runs[0].Verdict.Holds || runs[1].Verdict.Holds {
		t.Fatalf("3 runs judged: %d read, first holds %v, second holds %v; want the fast one to hold and the slow one not", len(runs), runs[0].Verdict, runs[1].Verdict)
	}
	if unmet == nil || unmet.Summary != runs[1].Summary {
		t.Errorf("unmet report %v, want the first run that does not hold (the second)", unmet)
	}
	if _, unmet, err := LoadRuns([]string{fast}, nil, rundir.Options{}, nil, false); err != nil || unmet != nil {
		t.Errorf("a run without an objective: unmet %v, %v; want none", unmet, err)
	}
	if _, _, err := LoadRuns([]string{fast, filepath.Join(t.TempDir(), "missing")}, nil, rundir.Options{}, o, false); err == nil {
		t.Error("a run that cannot be read: no error")
	}
}

// TestPageRunDrawsWhatItIsHanded: a run summarised elsewhere (a sharded
// run's workers, merged) is drawn from the records handed to observe.
func TestPageRunDrawsWhatItIsHanded(t *testing.T) {
	recs := []*record.Record{compareReq(0, record.Load{Concurrency: 1}, 0, 0, 50, 5, 8), compareReq(0, record.Load{Concurrency: 1}, 1, 100, 60, 5, 8)}
	r, rep, err := PageRun("2 workers merged", nil, false, func(observe func(*record.Record)) (*metrics.Summary, error) {
		var agg metrics.Aggregator
		for _, rec := range recs {
			agg.Add(rec)
			observe(rec)
		}
		return metrics.Summarize(nil, &agg), nil
	})
	if err != nil || rep != nil || r.Name != "2 workers merged" || len(r.Summary.Points) != 1 {
		t.Fatalf("PageRun: %v, report %v, name %q; want the run named, unjudged", err, rep, r.Name)
	}
	if ps := r.Curves.Points(); len(ps) != 1 || ps[0].TTFTCount != 2 {
		t.Errorf("curves %+v, want one point of the 2 requests handed over", ps)
	}
}
