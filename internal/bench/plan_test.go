package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/workload"
)

// TestPlanWorkloads: the cells are the given list, else the cross product
// of the lengths; the plan's spec and distributions are the first cell's,
// and a workload that cannot be crossed is refused naming its flag.
func TestPlanWorkloads(t *testing.T) {
	for _, c := range []struct {
		name             string
		spec             workload.Spec
		cells            []workload.Lengths
		prompts, outputs []string
		want             []string // the cells' labels
		wantErr          string
	}{
		// one length each: one cell
		{name: "single", prompts: []string{"256"}, outputs: []string{"64"}, want: []string{"in=256 out=64"}},
		// the cross product, prompt major
		{name: "cross", prompts: []string{"128", "2048"}, outputs: []string{"64", "512"},
			want: []string{"in=128 out=64", "in=128 out=512", "in=2048 out=64", "in=2048 out=512"}},
		// an objective's list wins over the lengths
		{name: "cells given", cells: []workload.Lengths{{PromptTokens: "32", OutputTokens: "8"}, {PromptTokens: "64", OutputTokens: "8"}},
			prompts: []string{"128"}, outputs: []string{"64"}, want: []string{"in=32 out=8", "in=64 out=8"}},
		// a dataset decides its own lengths: no matrix
		{name: "dataset crossed", spec: workload.Spec{Dataset: "d.jsonl"}, prompts: []string{"128", "256"}, outputs: []string{"64"},
			wantErr: "--dataset: cannot be crossed"},
		{name: "bad length", prompts: []string{"lots"}, outputs: []string{"64"}, wantErr: "--prompt-tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanWorkloads(c.spec, c.cells, c.prompts, c.outputs)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cell := range p.Cells {
				got = append(got, cell.Label())
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("cells %q, want %q", got, c.want)
			}
			first := p.Cells[0]
			if p.Spec.PromptTokens != first.PromptTokens || p.Spec.OutputTokens != first.OutputTokens {
				t.Errorf("spec lengths %q/%q, want the first cell's %q/%q", p.Spec.PromptTokens, p.Spec.OutputTokens, first.PromptTokens, first.OutputTokens)
			}
			if want, _ := workload.ParseLengthDist(first.PromptTokens); p.Prompt != want {
				t.Errorf("prompt dist %+v, want %+v", p.Prompt, want)
			}
			if want, _ := workload.ParseLengthDist(first.OutputTokens); p.Output != want {
				t.Errorf("output dist %+v, want %+v", p.Output, want)
			}
		})
	}
}

// TestSliceLength: a slice as given when it fits in the duration, 1m by
// default from a 10m duration, none for shorter runs without one.
func TestSliceLength(t *testing.T) {
	tests := []struct {
		name      string
		given     time.Duration // 0 when not given
		dur       time.Duration
		want      time.Duration
		wantError bool
	}{
		{"given", time.Minute, 30 * time.Minute, time.Minute, false},
		{"as long as the duration", 30 * time.Second, 30 * time.Second, 30 * time.Second, false},
		{"no duration: any length", 5 * time.Minute, 0, 5 * time.Minute, false},
		{"longer than the duration", 2 * time.Minute, time.Minute, 0, true},
		{"long run: a minute by default", 0, 10 * time.Minute, time.Minute, false},
		{"short run: none", 0, 9 * time.Minute, 0, false},
		{"requests only: none", 0, 0, 0, false},
	}
	for _, tt := range tests {
		got, err := SliceLength(tt.given, tt.dur)
		if got != tt.want || errors.Is(err, ErrSliceTooLong) != tt.wantError || (err != nil && !tt.wantError) {
			t.Errorf("%s: %v, %v; want %v, error %v", tt.name, got, err, tt.want, tt.wantError)
		}
	}
}

// TestSetPoints: every load of every cell, in order, each with its seed;
// a point bounded by nothing measures DefaultRequests.
func TestSetPoints(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base       load.Point
		loads      []record.Load
		want       string // each point's load and requests
		wantAmount int
	}{
		{"closed loop, no amount: the default count", load.Point{}, Levels([]int{1, 4}, nil, 0), "c=1 c=4", DefaultRequests},
		{"open loop with a cap, a count", load.Point{Requests: 7}, Levels([]int{9}, []float64{0.5, 2}, 3), "r=0.5/s ≤3 r=2/s ≤3", 7},
		{"a duration alone: no count", load.Point{Duration: time.Second}, Levels([]int{2}, nil, 0), "c=2", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{}
			p.SetPoints(tc.base, tc.loads, 10)
			var got []string
			for i, pt := range p.Points {
				got = append(got, pt.Load.Label())
				if pt.Index != i || pt.Seed != 10+uint64(i) || pt.Requests != tc.wantAmount {
					t.Errorf("point %d: index %d seed %d requests %d", i, pt.Index, pt.Seed, pt.Requests)
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("loads %q, want %q", g, tc.want)
			}
		})
	}
}

// TestNewPlan: what is not given is the defaults (512 → 128 tokens at
// concurrencies 1 to 16, DefaultRequests each), and what is given wins.
func TestNewPlan(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     PlanSpec
		loads    string // each point's load
		cell     string // the first cell's lengths
		requests int    // each point's
	}{
		{"nothing given: the defaults", PlanSpec{}, "c=1 c=2 c=4 c=8 c=16", "512→128", DefaultRequests},
		{"lengths and loads given", PlanSpec{Prompts: []string{"64"}, Outputs: []string{"8"}, Loads: Levels(nil, []float64{2}, 0),
			Point: load.Point{Requests: 5}, Slice: time.Minute}, "r=2/s", "64→8", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, pt := range p.Points {
				got = append(got, pt.Load.Label())
				if pt.Requests != tc.requests {
					t.Errorf("%s: %d requests, want %d", pt.Load.Label(), pt.Requests, tc.requests)
				}
			}
			if g := strings.Join(got, " "); g != tc.loads {
				t.Errorf("loads %q, want %q", g, tc.loads)
			}
			if g := p.Spec.PromptTokens + "→" + p.Spec.OutputTokens; g != tc.cell || p.Slice != tc.spec.Slice {
				t.Errorf("workload %q, slice %v; want %q, %v", g, p.Slice, tc.cell, tc.spec.Slice)
			}
		})
	}
}

func TestPlanSpecForObjective(t *testing.T) {
	o := &slo.Objective{Workload: workload.Spec{PromptTokens: "256", OutputTokens: "32"},
		Load: slo.Load{Concurrency: []int{2, 8}, Requests: 20, Duration: "30s", Warmup: "5s"}}
	arrival := load.Arrival{Process: load.ArrivalConstant}
	spec := PlanSpec{Prompts: []string{"64"}, Outputs: []string{"8"}, Loads: Levels(nil, []float64{2}, 0), Seed: 7, Slice: time.Minute,
		Point: load.Point{Requests: 5, WarmupRequests: 1, Arrival: arrival}}
	spec.ForObjective(o)
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pt := range p.Points {
		got = append(got, pt.Load.Label())
		// the objective's amount and warm-up; the arrivals as given
		if pt.Requests != 20 || pt.Duration != 30*time.Second || pt.WarmupRequests != 0 || pt.WarmupDuration != 5*time.Second || pt.Arrival != arrival {
			t.Errorf("%s: %+v, want the objective's 20 requests, 30s, warm-up 5s, and the arrivals given", pt.Load.Label(), pt)
		}
	}
	if g := strings.Join(got, " "); g != "c=2 c=8" {
		t.Errorf("loads %q, want the objective's c=2 c=8", g)
	}
	if g := p.Spec.PromptTokens + "→" + p.Spec.OutputTokens; g != "256→32" || p.Slice != time.Minute {
		t.Errorf("workload %q, slice %v; want the objective's 256→32, the slice given", g, p.Slice)
	}
}
