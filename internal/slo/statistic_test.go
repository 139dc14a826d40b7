package slo

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

func TestParseStatistic(t *testing.T) {
	tests := []struct {
		in, name, stat string
		higher         bool
		minSamples     int
	}{
		{"ttft p95", "ttft p95", "p95", false, 20},
		{"TTFT_MS median", "ttft p50", "p50", false, 2},
		// 95% of requests at least this fast: the p5 of speeds.
		{"speed p95", "speed p95", "p5", true, 20},
		{"e2e p99", "e2e p99", "p99", false, 100},
		{"throughput", "throughput", "", true, 1},
		{"errors", "error_rate", "", false, 1},
	}
	for _, tt := range tests {
		s, err := ParseStatistic(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if s.Name() != tt.name || s.Stat != tt.stat || s.HigherIsBetter() != tt.higher || s.MinSamples() != tt.minSamples {
			t.Errorf("%q: %q %q higher=%v min=%d", tt.in, s.Name(), s.Stat, s.HigherIsBetter(), s.MinSamples())
		}
	}
	for in, want := range map[string]string{"ttft": "needs a percentile", "bogus p95": "unknown metric", "throughput p95": "takes no percentile", "": "want METRIC"} {
		if _, err := ParseStatistic(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// The evaluator hands out, per load, the values each run contributed and
// the pooled summary; loads come ordered by workload cell, then load.
func TestEvaluatorGroupsAndLoads(t *testing.T) {
	small := record.Load{Workload: "in=128 out=64", Concurrency: 4}
	large := record.Load{Workload: "in=2048 out=64", Concurrency: 1}
	var ev Evaluator
	ev.Add(req(1, large, 1, 0, 100, 10, 3))
	ev.Add(req(0, small, 2, 0, 50, 10, 3))
	ev.Add(req(0, small, 3, 10, 70, 10, 3))
	ev.Add(req(2, small, 4, 500, 60, 10, 3)) // a repeat of small
	if got := ev.Loads(); len(got) != 2 || got[0] != small || got[1] != large {
		t.Fatalf("loads %v", got)
	}
	g := ev.Groups(small, MustStatistic("ttft p95"))
	if len(g) != 2 || len(g[0]) != 2 || g[0][0][0] != 50 || g[0][1][0] != 70 || g[1][0][0] != 60 {
		t.Errorf("ttft groups %v, want [[50] [70]] and [[60]]", g)
	}
	if g := ev.Groups(small, MustStatistic("itl p50")); len(g[0][0]) != 2 {
		t.Errorf("itl: a request contributes its gaps together: %v", g)
	}
	if ev.Groups(small, MustStatistic("throughput")) != nil {
		t.Error("throughput has no per-request values")
	}
	pt, ok := ev.Pooled(small)
	if v, n := MustStatistic("ttft p50").Value(&pt); !ok || v != 60 || n != 3 {
		t.Errorf("pooled ttft p50 %v of %d, want 60 of 3", v, n)
	}
}

// TestKeepThinsLongRunsInOrder: past Keep a run keeps every s-th request it
// recorded, first included and in order, and no more than Keep; a run
// within Keep, or an evaluator without it, keeps every request.
func TestKeepThinsLongRunsInOrder(t *testing.T) {
	cases := []struct {
		name             string
		keep, n          int
		wantKept, stride int
	}{
		{"no bound keeps all", 0, 1000, 1000, 1},
		{"within the bound keeps all", 64, 63, 63, 1},
		{"at the bound halves", 64, 64, 32, 2},
		{"twice past the bound", 64, 200, 50, 4},
		{"far past the bound", 64, 10_000, 40, 256},
	}
	load := record.Load{Concurrency: 1}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := &Evaluator{Keep: c.keep}
			for i := range c.n {
				ev.Add(req(0, load, int64(i), int64(i), int64(i+1), 1, 2)) // TTFT i+1 ms
			}
			kept, all := ev.Kept(load)
			if kept != c.wantKept || all != c.n {
				t.Fatalf("kept %d of %d, want %d of %d", kept, all, c.wantKept, c.n)
			}
			g := ev.Requests(load, MustStatistic("ttft p50"))
			for j, u := range g[0] {
				if want := float64(j*c.stride + 1); len(u) != 1 || u[0] != want {
					t.Fatalf("kept request %d has TTFT %v, want %v (every %d-th)", j, u, want, c.stride)
				}
			}
		})
	}
}
