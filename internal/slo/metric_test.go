package slo

import (
	"math"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// TestMetricTable checks every metric an objective can name: each name
// and alias parses to it, and a metric with a distribution has the
// per-request values goodput and the intervals need (requestValues).
// metrics' own test checks the table's fields and accessors.
func TestMetricTable(t *testing.T) {
	if len(metricDefs) == 0 {
		t.Fatal("no metric of metrics.Table has a name")
	}
	for _, m := range metricDefs {
		for _, name := range append([]string{m.Name}, m.Aliases...) {
			if got, ok := lookupMetric(name); !ok || got.Name != m.Name {
				t.Errorf("%s: %q looks up %v", m.Name, name, got)
			}
		}
		if m.Distribution() != (m.judge != nil) || m.Distribution() && m.samples == nil {
			t.Errorf("%s: a per-request metric needs judge and samples (requestValues), a one-number metric no judge", m.Name)
		}
	}
}

// TestRequestValuesNameMetrics: every metric given per-request values is
// a metric of the table an objective can name, so none is left unread.
func TestRequestValuesNameMetrics(t *testing.T) {
	for name := range requestValues {
		if m, ok := lookupMetric(name); !ok || m.Name != name {
			t.Errorf("requestValues[%q] names no metric of metrics.Table", name)
		}
	}
}

// TestMetricNotMeasured: a one-number metric of a point without requests
// is not measured (NaN), rather than a zero that would pass.
func TestMetricNotMeasured(t *testing.T) {
	var pt metrics.PointSummary
	for _, name := range []string{metricErrorRate, metricThroughput} {
		m, _ := lookupMetric(name)
		if v, n := m.Value(&pt); !math.IsNaN(v) || n != 0 {
			t.Errorf("%s of an empty point = %v over %d, want NaN over 0", name, v, n)
		}
	}
}

// TestTTFTByCacheHitJudgesEachRequestOnce: a request the server found
// some of the prompt of cached is judged on ttft_hit, any other (a count
// of 0, or none) on ttft_miss, never on both.
func TestTTFTByCacheHitJudgesEachRequestOnce(t *testing.T) {
	hit, miss := requestValues[metricTTFTHit], requestValues[metricTTFTMiss]
	for _, tc := range []struct {
		name   string
		server *record.ServerTiming
		isHit  bool
	}{
		{"cached 32", &record.ServerTiming{CachedTokens: new(32)}, true},
		{"cached 0", &record.ServerTiming{CachedTokens: new(0)}, false},
		{"no count", nil, false},
	} {
		r := &record.Record{SentNS: 0, FirstTokenNS: 40e6, EndNS: 50e6, OutputTokens: 1,
			Chunks: []record.Chunk{{AtNS: 40e6, Tokens: 1}}, Server: tc.server}
		v := values(r)
		h, m := hit.judge(v), miss.judge(v)
		if tc.isHit && (h != 40 || !math.IsNaN(m)) || !tc.isHit && (m != 40 || !math.IsNaN(h)) {
			t.Errorf("%s: judged %v on ttft_hit, %v on ttft_miss", tc.name, h, m)
		}
		if got := len(hit.samples(v)) + len(miss.samples(v)); got != 1 {
			t.Errorf("%s: %d samples in all, want 1", tc.name, got)
		}
	}
}
