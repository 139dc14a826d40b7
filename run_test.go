package servebench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// TestRefusesBeforeAnyLoad: a benchmark, objective or gate that cannot
// be used is an error saying what is wrong, and nothing is measured.
func TestRefusesBeforeAnyLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
		want string
	}{
		{"closed and open loop at once", func(ctx context.Context) error {
			_, err := servebench.Run(ctx, servebench.Benchmark{Loads: servebench.Loads{Concurrency: []int{1}, Rate: []float64{1}}})
			return err
		}, "Concurrency and Rate are exclusive"},
		{"a length that is no length", func(ctx context.Context) error {
			_, err := servebench.Run(ctx, servebench.Benchmark{Workload: servebench.Workload{PromptTokens: "many"}})
			return err
		}, "many"},
		{"an unknown arrival process", func(ctx context.Context) error {
			_, err := servebench.Run(ctx, servebench.Benchmark{Loads: servebench.Loads{Rate: []float64{1}, Arrival: "bursty"}})
			return err
		}, "bursty"},
		{"a server that is not there", func(ctx context.Context) error {
			_, err := servebench.Run(ctx, servebench.Benchmark{Target: servebench.Target{URL: "http://127.0.0.1:1"}})
			return err
		}, "127.0.0.1:1"},
		{"an objective without an SLO", func(ctx context.Context) error {
			_, err := servebench.Judge(ctx, servebench.Benchmark{}, servebench.Objective{})
			return err
		}, "no SLO"},
		{"an SLO that does not parse", func(ctx context.Context) error {
			_, err := servebench.Judge(ctx, servebench.Benchmark{}, servebench.Objective{SLOs: []string{"ttft fast"}})
			return err
		}, "ttft fast"},
		{"a gate that does not parse", func(context.Context) error {
			_, err := servebench.Compare(&servebench.Result{}, &servebench.Result{}, servebench.CompareOptions{Gates: []string{"ttft worse"}})
			return err
		}, "Results of Run, Judge or Open"},
		{"a model that is not there", func(context.Context) error {
			_, err := servebench.Plan(servebench.Deployment{Model: "testdata/none"}, servebench.PlanWorkload{})
			return err
		}, "testdata/none"},
		{"a device not in the catalog", func(context.Context) error {
			_, err := servebench.Plan(servebench.Deployment{Model: "internal/plan/testdata/models/Llama-3.1-8B", Devices: []string{"abacus"}},
				servebench.PlanWorkload{PromptTokens: 100, OutputTokens: 10, Concurrency: 1})
			return err
		}, `unknown device "abacus"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestCompareFindsRegression: fewer batch slots than users queue
// requests, and Compare shows TTFT grow.
func TestCompareFindsRegression(t *testing.T) {
	b := servebench.Benchmark{Loads: servebench.Loads{Concurrency: []int{8}}, Options: servebench.Options{Requests: 40}}
	before, err := servebench.Run(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := before.WriteText(&table); err != nil || !strings.Contains(table.String(), "c=8") {
		t.Errorf("WriteText: %v, a table without the load c=8:\n%s", err, table.String())
	}
	sim := servebench.DefaultSimConfig()
	sim.Engine.MaxNumSeqs = 2
	b.Target.Sim = &sim
	after, err := servebench.Run(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := servebench.Compare(before, after, servebench.CompareOptions{Gates: []string{"ttft worse"}}); err == nil || !strings.Contains(err.Error(), "ttft worse") {
		t.Errorf("a gate that does not parse: got %v", err)
	}
	c, err := servebench.Compare(before, after, servebench.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Points) != 1 || c.Points[0].Load.Concurrency != 8 {
		t.Fatalf("points compared: %+v, want c=8", c.Points)
	}
	if c.Controlled {
		t.Error("the simulators differ, yet the comparison says it is controlled")
	}
	for _, ch := range c.Points[0].Changes {
		// 8 users queue for 2 slots: the wait for a slot is a few requests long
		if ch.Metric != "ttft p95" {
			continue
		}
		if ch.Rel == nil || *ch.Rel < 1 {
			t.Errorf("ttft p95 with 2 slots for 8 users: %v ms to %v ms, want more than doubled", value(ch.A), value(ch.B))
		}
	}
}

// value is a figure that may be missing, for messages.
func value(v *float64) any {
	if v == nil {
		return "none"
	}
	return *v
}

// TestNotesSayWhatURLChose: an endpoint path in Target.URL chooses the
// API and the server's root, and Notes says so before any load.
func TestNotesSayWhatURLChose(t *testing.T) {
	var notes strings.Builder
	_, err := servebench.Run(t.Context(), servebench.Benchmark{
		Target:   servebench.Target{URL: "http://127.0.0.1:1/v1/completions", Model: "m", NoPreflight: true},
		Workload: servebench.Workload{Tokenizer: "cl100k_base"},
		Loads:    servebench.Loads{Concurrency: []int{1}},
		Options:  servebench.Options{Requests: 1, NoTelemetry: true, Notes: &notes},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "note: URL ends in the openai-completions endpoint: measuring the server at http://127.0.0.1:1 with API openai-completions\n"
	if notes.String() != want {
		t.Errorf("notes:\n%q\nwant\n%q", notes.String(), want)
	}
}
