package metrics

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// TestClientWarnings: a point whose client was busy or late says so, each
// with its own warning; a quiet client adds none.
func TestClientWarnings(t *testing.T) {
	const busy, late = "CPU (of one core)", "behind schedule"
	tests := []struct {
		name   string
		client record.ClientStats
		want   []string
	}{
		{"quiet client", record.ClientStats{CPUPercent: 20, LagP99MS: 1}, nil},
		// Far above any machine's core count times the threshold.
		{"busy client", record.ClientStats{CPUPercent: 1e9, LagP99MS: 1}, []string{busy}},
		{"late dispatcher", record.ClientStats{CPUPercent: 20, LagP99MS: 50}, []string{late}},
		{"both", record.ClientStats{CPUPercent: 1e9, LagP99MS: 50}, []string{busy, late}},
	}
	for _, tt := range tests {
		var a Aggregator
		a.Add(req(1, 0, 0, 10, 20, 5))
		run := &record.Run{Points: []record.PointClient{{Index: 0, Client: tt.client}}}
		s := Summarize(run, &a)
		var got []string
		for _, w := range s.Points[0].Warnings {
			for _, k := range []string{busy, late} {
				if strings.Contains(w, k) {
					got = append(got, k)
				}
			}
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: warnings %q, want ones about %q", tt.name, s.Points[0].Warnings, tt.want)
		}
		if s.Points[0].Client == nil || *s.Points[0].Client != tt.client {
			t.Errorf("%s: point client %+v, want the run's %+v", tt.name, s.Points[0].Client, tt.client)
		}
	}
}
