package report

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

// The HTML report of a run of 100,000 requests (docs/PERFORMANCE.md, "HTML
// report"): the goal is under 2 s to render and under maxPageBytes of page.
const (
	benchRequests = 100_000
	benchTokens   = 64 // output tokens (one chunk each) per request
	// maxPageBytes: the page of 100,000 requests stays one file a mail or
	// a ticket carries (issue 27's goal); its size does not grow with the run.
	maxPageBytes = 300_000
)

// benchLoads are the run's concurrencies: 100,000 requests are a long run
// at high load (about 3 hours of model time here, one telemetry sample a
// second), not days at c=1.
var benchLoads = []int{16, 64, 256}

// BenchmarkHTMLPage100k renders the page of 100,000 requests from their
// records: the summary and curves folded from every record, then the
// page written. Records are in memory (reading them is the records
// reader's cost, measured with the built binary in docs/PERFORMANCE.md).
func BenchmarkHTMLPage100k(b *testing.B) {
	var recs []*record.Record
	judged, samples := sampleRun(b, "bench", benchLoads, benchRequests, benchTokens, func(r *record.Record) { recs = append(recs, r) })
	if dir := os.Getenv("SERVEBENCH_HTML_BENCH_DIR"); dir != "" {
		writeBenchRun(b, dir, recs, judged.Summary.Run, samples)
	}
	size := 0
	for b.Loop() {
		var agg metrics.Aggregator
		curves := &metrics.Curves{}
		for _, r := range recs {
			agg.Add(r)
			curves.Add(r)
		}
		curves.AddTelemetry(telemetry.SliceScan(samples), 1)
		s := metrics.Summarize(judged.Summary.Run, &agg)
		s.AddTelemetry(telemetry.SliceScan(samples))
		cw := &countWriter{}
		page := &HTMLPage{Title: "bench", Runs: []HTMLRun{{Name: "bench", Summary: s, Objective: judged.Objective, Verdict: judged.Verdict, Curves: curves}}}
		if err := WriteHTML(cw, page); err != nil {
			b.Fatal(err)
		}
		size = cw.n
	}
	b.ReportMetric(float64(size), "page-bytes")
	if size > maxPageBytes {
		b.Errorf("page of %d bytes, over the %d-byte goal", size, maxPageBytes)
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// writeBenchRun writes the records as a run directory, for timing the
// built binary on it: SERVEBENCH_HTML_BENCH_DIR=DIR go test -run '^$'
// -bench HTMLPage100k ./internal/report, then servebench report --format
// html DIR.
func writeBenchRun(b *testing.B, dir string, recs []*record.Record, run *record.Run, samples []telemetry.Sample) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	writeLines(b, filepath.Join(dir, "records.jsonl"), recs)
	writeLines(b, filepath.Join(dir, rundir.TelemetryFile), samples)
	rj, _ := json.Marshal(run)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), rj, 0o644); err != nil {
		b.Fatal(err)
	}
	var agg metrics.Aggregator
	for _, r := range recs {
		agg.Add(r)
	}
	sf, err := os.Create(filepath.Join(dir, "summary.json"))
	if err != nil {
		b.Fatal(err)
	}
	defer sf.Close()
	if err := JSON(io.Writer(sf), metrics.Summarize(run, &agg)); err != nil {
		b.Fatal(err)
	}
}

// writeLines writes a JSON Lines file.
func writeLines[T any](b *testing.B, path string, xs []T) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
