package slo

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// TestMetricTable checks each metric definition against itself: every
// name and alias parses to it, it has the accessors its kind needs, and
// the summary.json field it names holds the value its accessor reads.
func TestMetricTable(t *testing.T) {
	// A point whose every distribution has a distinct count, and whose
	// one-number fields are distinct, so a wrong accessor shows.
	var pt metrics.PointSummary
	v := reflect.ValueOf(&pt).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[stats.Dist]() {
			f.Set(reflect.ValueOf(stats.Dist{Count: 100 + i}))
		}
	}
	pt.ErrorRate, pt.OutputTPS = 0.25, 1234
	pt.Requests = metrics.Requests{Completed: 6, Failed: 2, Errors: map[string]int{record.ClassOOM: 1, record.ClassHTTP5xx: 1}}
	raw, err := json.Marshal(pt)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, m := range metricDefs {
		for _, name := range append([]string{m.name}, m.aliases...) {
			if got, ok := lookupMetric(name); !ok || got.name != m.name {
				t.Errorf("%s: %q looks up %v", m.name, name, got)
			}
		}
		field := jsonPath(doc, m.field)
		if field == nil {
			t.Errorf("%s: summary.json has no field %q", m.name, m.field)
			continue
		}
		if m.kind.distribution() {
			if m.dist == nil || m.judge == nil || m.samples == nil || m.point != nil {
				t.Errorf("%s: a per-request metric needs dist, judge and samples, and no point", m.name)
				continue
			}
			if got, want := m.dist(&pt).Count, field.(map[string]any)["count"]; float64(got) != want {
				t.Errorf("%s: dist reads count %d, field %s has %v", m.name, got, m.field, want)
			}
			continue
		}
		if m.point == nil || m.dist != nil || m.judge != nil {
			t.Errorf("%s: a one-number metric needs point, and no dist or judge", m.name)
			continue
		}
		if got, _ := m.point(&pt); got != field.(float64) {
			t.Errorf("%s: point reads %v, field %s has %v", m.name, got, m.field, field)
		}
	}
}

// jsonPath follows a dotted path such as "requests.errors.out_of_memory".
func jsonPath(doc map[string]any, path string) any {
	var cur any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// TestMetricNotMeasured: a one-number metric of a point without requests
// is not measured (NaN), rather than a zero that would pass.
func TestMetricNotMeasured(t *testing.T) {
	var pt metrics.PointSummary
	for _, name := range []string{metricErrorRate, metricThroughput} {
		m, _ := lookupMetric(name)
		if v, n := m.point(&pt); !math.IsNaN(v) || n != 0 {
			t.Errorf("%s of an empty point = %v over %d, want NaN over 0", name, v, n)
		}
	}
}
