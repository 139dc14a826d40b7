package slo

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
)

// inCell moves verdicts into a workload cell.
func inCell(w string, pts []PointVerdict) []PointVerdict {
	for i := range pts {
		pts[i].Load.Workload = w
	}
	return pts
}

// TestJudgeMatrix: each workload is judged on its own; the matrix holds
// when every cell does, and its capacity is the lowest cell's.
func TestJudgeMatrix(t *testing.T) {
	o, _ := ParseObjective([]byte("name: t\nload: {concurrency: [1, 2, 4, 8], target: 2}\nslos: [ttft p95 <= 1s]\n"))
	short := inCell("in=128 out=64", verdicts([]int{1, 2, 4, 8}, []bool{true, true, true, false},
		[]float64{100, 200, 400, 410}, []float64{10, 10, 11, 40}))
	long := inCell("in=2048 out=512", verdicts([]int{1, 2, 4, 8}, []bool{true, false, false, false},
		[]float64{50, 60, 61, 62}, []float64{20, 40, 80, 160}))
	v := Judge(o, append(short, long...), nil, nil)
	if v.Holds || len(v.Workloads) != 2 || len(v.Points) != 8 {
		t.Fatalf("holds %v, %d workloads, %d points", v.Holds, len(v.Workloads), len(v.Points))
	}
	s, l := v.Workloads[0], v.Workloads[1]
	for _, c := range []struct {
		name      string
		got, want any
	}{
		// each cell its own verdict, capacity and target load
		{"short cell", s.Workload, "in=128 out=64"},
		{"short holds", s.Holds, true},
		{"short capacity", *s.Capacity.Load, record.Load{Workload: "in=128 out=64", Concurrency: 4}},
		{"short target", s.TargetLoad, record.Load{Workload: "in=128 out=64", Concurrency: 2}},
		{"short points", len(s.Points), 4},
		{"long holds", l.Holds, false},
		{"long capacity", *l.Capacity.Load, record.Load{Workload: "in=2048 out=512", Concurrency: 1}},
		// the matrix: the lowest capacity, naming its cell; the failing cell's reasons
		{"capacity", *v.Capacity.Load, record.Load{Workload: "in=2048 out=512", Concurrency: 1}},
		{"target", v.TargetLoad, record.Load{Concurrency: 2}},
		{"reasons", v.Reasons, []string{"in=2048 out=512: ttft p95 2.1s > 1s"}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
	for _, want := range []string{
		"does not hold for 1 of the 2 workloads at the target load, concurrency 2 (in=2048 out=512)",
		"every workload meets the objective up to concurrency 1 (lowest: in=2048 out=512)",
	} {
		if !strings.Contains(v.Text, want) {
			t.Errorf("text %q\nlacks %q", v.Text, want)
		}
	}
	if !strings.Contains(s.Text, "saturates at concurrency 4") || !strings.Contains(s.Text, "holds at the target load, concurrency 2") {
		t.Errorf("short cell's text %q", s.Text)
	}
	// A cell never met makes the matrix's capacity not found.
	never := inCell("in=8192 out=512", verdicts([]int{1, 2}, []bool{false, false}, []float64{1, 1}, []float64{1, 1}))
	v = Judge(o, append(short, never...), nil, nil)
	if v.Capacity.Found || v.Capacity.FailsAt.Workload != "in=8192 out=512" ||
		!strings.Contains(v.Text, "in=8192 out=512 does not meet the objective even at concurrency 1") {
		t.Errorf("capacity %+v, text %q", v.Capacity, v.Text)
	}
	// A cell the objective lists but nothing measured fails the matrix.
	o.Workloads = []workload.Lengths{{PromptTokens: "128", OutputTokens: "64"}, {PromptTokens: "2048", OutputTokens: "512"}, {PromptTokens: "8192", OutputTokens: "512"}}
	v = Judge(o, append(short, long...), nil, nil)
	if v.Holds || v.Reasons[len(v.Reasons)-1] != "in=8192 out=512: not measured" {
		t.Errorf("unmeasured cell: holds %v, reasons %q", v.Holds, v.Reasons)
	}
	o.Workloads = nil
	// A search's capacity is taken per cell.
	found := record.Load{Workload: "in=128 out=64", Concurrency: 6}
	v = Judge(o, append(short, long...), map[string]*Capacity{"in=128 out=64": {Method: "search", Found: true, Load: &found, Probes: 5}}, nil)
	if v.Workloads[0].Capacity.Method != "search" || *v.Workloads[0].Capacity.Load != found || v.Workloads[1].Capacity.Method != "sweep" {
		t.Errorf("per-cell capacities %+v, %+v", v.Workloads[0].Capacity, v.Workloads[1].Capacity)
	}
}

// TestJudgeOneWorkloadHasNoCells: a run with one workload is judged as
// before the matrix, without per-workload verdicts.
func TestJudgeOneWorkloadHasNoCells(t *testing.T) {
	o, _ := ParseObjective([]byte("name: t\nload: {concurrency: [1, 2]}\nslos: [ttft p95 <= 1s]\n"))
	v := Judge(o, verdicts([]int{1, 2}, []bool{true, true}, []float64{1, 2}, []float64{1, 1}), nil, nil)
	if v.Workloads != nil || v.Workload != "" || !v.Holds {
		t.Errorf("single workload verdict %+v", v)
	}
}

// TestSearchKeepsTheWorkload: every probe of a search is a load of the
// start's workload cell.
func TestSearchKeepsTheWorkload(t *testing.T) {
	var tried []float64
	cell := "in=128 out=64"
	probe := fakeServer(5, &tried)
	c, err := Search{Start: record.Load{Workload: cell, Concurrency: 1}}.Run(context.Background(), func(ctx context.Context, l record.Load) (PointVerdict, error) {
		if l.Workload != cell {
			t.Errorf("probe at %+v", l)
		}
		return probe(ctx, l)
	})
	if err != nil || c.Load.Workload != cell || c.FailsAt.Workload != cell {
		t.Errorf("capacity %+v %+v, %v", c.Load, c.FailsAt, err)
	}
}

// TestEvaluateOrdersByWorkloadAsRun: verdicts come workload by workload in
// the order the workloads first ran (not alphabetical), loads ascending
// within each.
func TestEvaluateOrdersByWorkloadAsRun(t *testing.T) {
	var ev Evaluator
	for i, l := range []record.Load{{Workload: "in=512 out=8", Concurrency: 4}, {Workload: "in=512 out=8", Concurrency: 1},
		{Workload: "in=128 out=8", Concurrency: 1}, {Workload: "in=128 out=8", Concurrency: 4}} {
		ev.Add(&record.Record{Point: i, Load: l, Phase: record.PhaseMeasured})
	}
	var got []string
	for _, pv := range ev.Evaluate(nil, Options{}) {
		got = append(got, pv.Load.Label())
	}
	want := []string{"in=512 out=8 c=1", "in=512 out=8 c=4", "in=128 out=8 c=1", "in=128 out=8 c=4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}
