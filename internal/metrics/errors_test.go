package metrics

import (
	"maps"
	"testing"
)

// TestSummaryErrors: counts add up over the points, and the sample is the
// first one kept of the most frequent class, whichever point kept it.
func TestSummaryErrors(t *testing.T) {
	point := func(errs map[string]int, samples map[string]string) PointSummary {
		var p PointSummary
		p.Requests.Errors, p.Requests.ErrorSamples = errs, samples
		return p
	}
	for _, c := range []struct {
		name       string
		points     []PointSummary
		want       map[string]int
		wantSample string
	}{
		{"none", []PointSummary{point(nil, nil)}, map[string]int{}, ""},
		// connect is the most frequent over both points; the first point kept no sample of it
		{"summed", []PointSummary{
			point(map[string]int{"connect": 2, "http_4xx": 3}, map[string]string{"http_4xx": "401"}),
			point(map[string]int{"connect": 4}, map[string]string{"connect": "refused"}),
		}, map[string]int{"connect": 6, "http_4xx": 3}, "refused"},
		{"no sample kept", []PointSummary{point(map[string]int{"timeout": 1}, nil)}, map[string]int{"timeout": 1}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, sample := (&Summary{Points: c.points}).Errors()
			if !maps.Equal(got, c.want) || sample != c.wantSample {
				t.Errorf("got %v %q, want %v %q", got, sample, c.want, c.wantSample)
			}
		})
	}
}
