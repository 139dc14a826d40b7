package servebench_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/servebench/servebench"
)

// Measure the built-in simulated server at two loads, keeping the records
// in memory, and read the figures of each load.
func ExampleRun() {
	res, err := servebench.Run(context.Background(), servebench.Benchmark{
		Loads:   servebench.Loads{Concurrency: []int{1, 4}},
		Options: servebench.Options{Requests: 20},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Summary.Points {
		fmt.Printf("%s: %d requests completed\n", p.Load.Label(), p.Requests.Completed)
		_ = *p.TTFT.P95 // TTFT p95 in ms; p.DecodeTPSReq.P5 is the speed 95% of users get
	}
	// Output:
	// c=1: 20 requests completed
	// c=4: 20 requests completed
}

// Find the highest load at which a server meets an objective: the load
// is raised from the lowest given, then bisected.
func ExampleJudge() {
	rep, err := servebench.Judge(context.Background(), servebench.Benchmark{
		Target: servebench.Target{URL: "http://127.0.0.1:8000", Model: "meta-llama/Llama-3.1-8B-Instruct"},
		Loads:  servebench.Loads{Concurrency: []int{1}},
	}, servebench.Objective{SLOs: []string{"ttft p95 <= 500ms", "speed p95 >= 20 tok/s"}, FindCapacity: true})
	if err != nil {
		log.Fatal(err)
	}
	rep.WriteText(os.Stdout)
	fmt.Println(rep.Verdict.Text)
}

// Plan a model on one device before any server exists.
func ExamplePlan() {
	p, err := servebench.Plan(servebench.Deployment{
		Model:   "internal/plan/testdata/models/Llama-3.1-8B",
		Devices: []string{"H100-SXM"},
	}, servebench.PlanWorkload{PromptTokens: 1024, OutputTokens: 256, Concurrency: 16})
	if err != nil {
		log.Fatal(err)
	}
	d := p.Devices[0]
	fmt.Println(d.Device, "fits:", d.Fits)
	// Output:
	// H100-SXM fits: true
}

// Compare a server with a change to it: here the simulator with half the
// sequences in a batch.
func ExampleCompare() {
	ctx := context.Background()
	b := servebench.Benchmark{Loads: servebench.Loads{Concurrency: []int{8}}, Options: servebench.Options{Requests: 40}}
	before, err := servebench.Run(ctx, b)
	if err != nil {
		log.Fatal(err)
	}
	sim := servebench.DefaultSimConfig()
	sim.Engine.MaxNumSeqs = 4
	b.Target.Sim = &sim
	after, err := servebench.Run(ctx, b)
	if err != nil {
		log.Fatal(err)
	}
	c, err := servebench.Compare(before, after, servebench.CompareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range c.Points {
		for _, ch := range p.Changes {
			fmt.Printf("%s %s: %s\n", p.Load.Label(), ch.Metric, ch.Verdict) // worse, better, noise, or unknown without repeats
		}
	}
}

// Compare two runs written by servebench run --out (or by Run with
// Options.OutDir), failing when TTFT p95 grew by more than 10%, as
// servebench compare --fail-on-regression does.
func ExampleOpen() {
	before, err := servebench.Open("runs/main")
	if err != nil {
		log.Fatal(err)
	}
	after, err := servebench.Open("runs/candidate")
	if err != nil {
		log.Fatal(err)
	}
	c, err := servebench.Compare(before, after, servebench.CompareOptions{Gates: []string{"ttft p95 +10%"}})
	if err != nil {
		log.Fatal(err)
	}
	if c.Regressed {
		log.Fatal("TTFT p95 regressed")
	}
}

// Compare three runs of each deployment, each side read as one, so that
// the intervals resample runs, which differ by more than their requests
// suggest (servebench compare A1,A2,A3 B1,B2,B3). A damaged records line
// is refused instead of skipped.
func ExampleOpenRuns() {
	opt := servebench.OpenOptions{Strict: true}
	before, err := servebench.OpenRuns([]string{"runs/main-1", "runs/main-2", "runs/main-3"}, opt)
	if err != nil {
		log.Fatal(err)
	}
	after, err := servebench.OpenRuns([]string{"runs/candidate-1", "runs/candidate-2", "runs/candidate-3"}, opt)
	if err != nil {
		log.Fatal(err)
	}
	c, err := servebench.Compare(before, after, servebench.CompareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range c.Points {
		for _, ch := range p.Changes {
			fmt.Printf("%s %s: %s\n", p.Load.Label(), ch.Metric, ch.Verdict)
		}
	}
}

// TestChatSLO is an SLO as a Go test: at 4 concurrent users the built-in
// simulator must answer 95% of requests within 1 s and decode for 95% of
// them at 50 tokens/s or faster. A verdict the evidence cannot carry (the
// simulator fell behind its clock on a busy machine) skips, saying why.
func TestChatSLO(t *testing.T) {
	sim := servebench.DefaultSimConfig()
	sim.TimeScale = 4 // four times faster than the modelled GPU, all figures in its time
	rep, err := servebench.Judge(t.Context(), servebench.Benchmark{
		Target:   servebench.Target{Sim: &sim},
		Workload: servebench.Workload{PromptTokens: "512", OutputTokens: "64"},
		Loads:    servebench.Loads{Concurrency: []int{4}},
	}, servebench.Objective{SLOs: []string{"ttft p95 <= 1s", "speed p95 >= 50 tok/s"}})
	if err != nil {
		t.Fatal(err)
	}
	switch v := rep.Verdict; {
	case v.Inconclusive:
		t.Skip("INCONCLUSIVE: ", v.Text)
	case !v.Holds:
		t.Fatal(v.Text)
	}
}
