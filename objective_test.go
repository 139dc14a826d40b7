package servebench

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/slo"
)

// TestObjectiveResolvesBenchmark: Judge's objective is the benchmark's
// workload and loads over the objective given, as servebench run resolves
// its flags over an objective: defaults filled in, the warm-up and amount
// written as an objective file writes them.
func TestObjectiveResolvesBenchmark(t *testing.T) {
	ttft := []string{"ttft p95 <= 1s"}
	for _, tc := range []struct {
		name     string
		b        Benchmark
		o        Objective
		wantName string
		wantLoad slo.Load
		wantLen  [2]string // prompt, output
	}{
		{"a zero benchmark: the defaults of run", Benchmark{}, Objective{SLOs: ttft},
			"objective", slo.Load{Concurrency: []int{1, 2, 4, 8, 16}, Requests: 100}, [2]string{"512", "128"}},
		{"rates with a cap and a target", Benchmark{Loads: Loads{Rate: []float64{1, 2.5}, MaxConcurrency: 8}}, Objective{Name: "chat", SLOs: ttft, TargetLoad: 2.5},
			"chat", slo.Load{Rate: []float64{1, 2.5}, MaxConcurrency: 8, Target: 2.5, Requests: 100}, [2]string{"512", "128"}},
		{"a duration replaces the default count", Benchmark{Options: Options{Duration: time.Minute, WarmupRequests: 5}}, Objective{SLOs: ttft},
			"objective", slo.Load{Concurrency: []int{1, 2, 4, 8, 16}, Duration: "1m0s", Warmup: "5"}, [2]string{"512", "128"}},
		{"a warm-up time outranks a warm-up count", Benchmark{Options: Options{Requests: 20, WarmupRequests: 5, WarmupDuration: 10 * time.Second}},
			Objective{SLOs: ttft}, "objective", slo.Load{Concurrency: []int{1, 2, 4, 8, 16}, Requests: 20, Warmup: "10s"}, [2]string{"512", "128"}},
		{"the workload's lengths", Benchmark{Workload: Workload{PromptTokens: "uniform:100,200", OutputTokens: "64"}, Loads: Loads{Concurrency: []int{4}}},
			Objective{SLOs: ttft}, "objective", slo.Load{Concurrency: []int{4}, Requests: 100}, [2]string{"uniform:100,200", "64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.b.objective(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.wantName {
				t.Errorf("name: got %q, want %q", got.Name, tc.wantName)
			}
			if !reflect.DeepEqual(got.Load, tc.wantLoad) {
				t.Errorf("load:\ngot  %+v\nwant %+v", got.Load, tc.wantLoad)
			}
			if l := [2]string{got.Workload.PromptTokens, got.Workload.OutputTokens}; l != tc.wantLen {
				t.Errorf("lengths: got %q, want %q", l, tc.wantLen)
			}
			if len(got.SLOs) != 1 || got.SLOs[0].Expr != tc.o.SLOs[0] {
				t.Errorf("SLOs: got %+v, want %q", got.SLOs, tc.o.SLOs)
			}
		})
	}
}

// TestObjectiveRefusals: an objective that cannot be judged is refused,
// saying which part.
func TestObjectiveRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Benchmark
		o    Objective
		want string
	}{
		{"no SLO", Benchmark{}, Objective{}, "no SLO"},
		{"an SLO that does not parse", Benchmark{}, Objective{SLOs: []string{"ttft fast"}}, "ttft fast"},
		{"a fractional concurrency target", Benchmark{}, Objective{SLOs: []string{"ttft p95 <= 1s"}, TargetLoad: 2.5}, "load.target"},
		{"a cap on a closed loop", Benchmark{Loads: Loads{MaxConcurrency: 4}}, Objective{SLOs: []string{"ttft p95 <= 1s"}}, "load.max_concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.b.objective(tc.o)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
