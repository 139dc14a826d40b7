package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/workload"
)

// offsets lists a schedule's arrivals.
func offsets(t *testing.T, s *load.Schedule) []time.Duration {
	t.Helper()
	var out []time.Duration
	if err := s.Arrivals(func(off time.Duration, _ int64) bool { out = append(out, off); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// A trace's point at another rate replays the same arrivals, their offsets
// scaled by the trace's rate ÷ that rate; at its own rate, or for a point
// with no schedule, nothing changes.
func TestAtLoad(t *testing.T) {
	trace := []time.Duration{0, time.Second, 3 * time.Second}
	base := load.Point{Load: record.Load{Rate: 2}, Requests: 3, Schedule: &load.Schedule{Last: 3 * time.Second,
		Arrivals: func(yield func(time.Duration, int64) bool) error {
			for i, off := range trace {
				if !yield(off, int64(i+1)) {
					break
				}
			}
			return nil
		}}}
	for _, c := range []struct {
		rate float64
		want []time.Duration
		last time.Duration
	}{
		{2, trace, 3 * time.Second}, // the replay itself
		{4, []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond}, 1500 * time.Millisecond},
		{1, []time.Duration{0, 2 * time.Second, 6 * time.Second}, 6 * time.Second},
	} {
		p := atLoad(base, record.Load{Rate: c.rate})
		if got := offsets(t, p.Schedule); !slices.Equal(got, c.want) || p.Schedule.Last != c.last {
			t.Errorf("at %v/s: arrivals %v last %v, want %v last %v", c.rate, got, p.Schedule.Last, c.want, c.last)
		}
	}
	closed := load.Point{Load: record.Load{Concurrency: 4}, Requests: 8}
	if p := atLoad(closed, record.Load{Concurrency: 8}); p.Schedule != nil || p.Load != closed.Load {
		t.Errorf("a point with no schedule changed: %+v", p)
	}
}

// An objective judging a replay takes the trace's rate as its one load
// and target (unless a target is given) and the trace's lengths; its own
// load and workload, made for synthetic requests, are dropped.
func TestJudgeTrace(t *testing.T) {
	p := &Plan{Points: []load.Point{{Load: record.Load{Rate: 2.27, MaxConcurrency: 8}}}}
	for _, c := range []struct {
		target float64
		want   record.Load
	}{
		{0, record.Load{Rate: 2.27, MaxConcurrency: 8}},
		{5, record.Load{Rate: 5, MaxConcurrency: 8}},
	} {
		o := &slo.Objective{Name: "chat", Load: slo.Load{Concurrency: []int{1, 8}, Target: 8, Requests: 100},
			Workload: workload.Spec{PromptTokens: "1024", OutputTokens: "256"}, Workloads: []workload.Lengths{{PromptTokens: "1", OutputTokens: "2"}}}
		p.JudgeTrace(o, c.target)
		if got := o.Load.Levels(); !slices.Equal(got, []record.Load{{Rate: 2.27, MaxConcurrency: 8}}) || o.Load.TargetLoad() != c.want {
			t.Errorf("target %v: levels %v, target %v; want the trace's rate, target %v", c.target, got, o.Load.TargetLoad(), c.want)
		}
		if o.Workload.PromptTokens != record.TraceLengths || o.Workload.OutputTokens != record.TraceLengths || o.Workloads != nil {
			t.Errorf("workload %+v %v: want the trace's", o.Workload, o.Workloads)
		}
	}
}
