package slo

import (
	"errors"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

func outcome(name string, labels map[string]string, holds bool, capacity int, server map[record.ServerKey]string) Outcome {
	l := record.Load{Concurrency: capacity}
	e2e := float64(100 * capacity)
	v := &Verdict{Holds: holds, TargetLoad: record.Load{Concurrency: 4}, Capacity: Capacity{Load: &l},
		Points: []PointVerdict{{Load: record.Load{Concurrency: 4}, E2EMeanMS: &e2e}}}
	return Outcome{Candidate: Candidate{Name: name, Labels: labels}, Verdict: v, Server: server}
}

func withMemory(o Outcome, bytes float64, order int) Outcome {
	o.MemoryBytes, o.Order = bytes, order
	return o
}

func TestDecideRanking(t *testing.T) {
	o := &Objective{Name: "t", Priority: PriorityResponsiveness}
	srv := map[record.ServerKey]string{record.ServerModelID: "llama", record.ServerMaxModelLen: "8192", record.ServerRuntime: "vllm"}
	tests := []struct {
		name string
		outs []Outcome
		want string
	}{
		{"fewest GPUs first", []Outcome{
			outcome("big", map[string]string{"gpus": "2", "cost": "1"}, true, 16, srv),
			outcome("small", map[string]string{"gpus": "1", "cost": "3"}, true, 8, srv),
		}, "small"},
		{"then lowest cost", []Outcome{
			outcome("dear", map[string]string{"gpus": "1", "cost": "$4"}, true, 16, srv),
			outcome("cheap", map[string]string{"gpus": "1", "cost": "2"}, true, 8, srv),
		}, "cheap"},
		{"only those that meet the objective", []Outcome{
			outcome("fails", map[string]string{"gpus": "1"}, false, 2, srv),
			outcome("meets", map[string]string{"gpus": "4"}, true, 8, srv),
		}, "meets"},
		{"unlabelled ranks last", []Outcome{
			outcome("unknown", map[string]string{}, true, 8, srv),
			outcome("labelled", map[string]string{"gpus": "8"}, true, 8, srv),
		}, "labelled"},
		{"ties by responsiveness: lower E2E", []Outcome{
			outcome("slow", map[string]string{"gpus": "1"}, true, 16, srv),
			outcome("fast", map[string]string{"gpus": "1"}, true, 8, srv),
		}, "fast"},
		{"none", []Outcome{outcome("fails", nil, false, 1, srv)}, ""},
		{"then least memory, before cost and priority", []Outcome{
			withMemory(outcome("fat", map[string]string{"gpus": "1", "cost": "1"}, true, 8, srv), 40<<30, 0),
			withMemory(outcome("lean", map[string]string{"gpus": "1", "cost": "9"}, true, 16, srv), 20<<30, 1),
		}, "lean"},
		{"memory within 10% is a tie: then the priority", []Outcome{
			withMemory(outcome("slow", map[string]string{"gpus": "1"}, true, 16, srv), 20.5*(1<<30), 0),
			withMemory(outcome("fast", map[string]string{"gpus": "1"}, true, 8, srv), 21*(1<<30), 1),
		}, "fast"},
		{"then the order given, not the name", []Outcome{
			withMemory(outcome("seqs-8", map[string]string{"gpus": "1"}, true, 8, srv), 0, 0),
			withMemory(outcome("seqs-16", map[string]string{"gpus": "1"}, true, 8, srv), 0, 1),
		}, "seqs-8"},
	}
	for _, tt := range tests {
		d := Decide(o, tt.outs)
		if d.Recommended != tt.want {
			t.Errorf("%s: recommended %q, want %q (%s)", tt.name, d.Recommended, tt.want, d.Why)
		}
	}
	// Throughput priority breaks the tie the other way: higher capacity.
	o.Priority = PriorityThroughput
	d := Decide(o, tests[4].outs)
	if d.Recommended != "slow" {
		t.Errorf("throughput priority: %q", d.Recommended)
	}
}

func TestDecideDifferences(t *testing.T) {
	o := &Objective{Name: "t"}
	a := outcome("a", map[string]string{"quantization": "bf16"}, true, 8,
		map[record.ServerKey]string{"model_id": "llama", "quantization": "bf16", "max_model_len": "8192", "sampling.temperature": "0.8", "engine": "x"})
	b := outcome("b", map[string]string{"quantization": "fp8"}, true, 8,
		map[record.ServerKey]string{"model_id": "llama", "quantization": "fp8", "max_model_len": "4096", "sampling.temperature": "0.7", "engine": "y"})
	d := Decide(o, []Outcome{a, b})
	got := map[record.ServerKey]bool{}
	for _, diff := range d.Differences {
		got[diff.Key] = diff.Controlled
	}
	want := map[record.ServerKey]bool{"quantization": true, "max_model_len": false, "sampling.temperature": false}
	if len(got) != len(want) {
		t.Errorf("differences %v, want %v", got, want)
	}
	for k, c := range want {
		if g, ok := got[k]; !ok || g != c {
			t.Errorf("%s: controlled %v (present %v), want %v", k, g, ok, c)
		}
	}
}

func TestParseCandidates(t *testing.T) {
	cf, err := ParseCandidates([]byte(`objective: chat
candidates:
  - name: a
    url: http://127.0.0.1:8000
    labels: {gpus: 1, cost: 2.5, gpu: A100}
  - name: b
    sim:
      engine: {max_num_seqs: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cf.Objective != "chat" || len(cf.Candidates) != 2 || cf.Candidates[0].Labels["cost"] != "2.5" ||
		!cf.Candidates[1].Simulated || !strings.Contains(string(cf.Candidates[1].Sim), "max_num_seqs: 4") {
		t.Errorf("%+v", cf)
	}
	for _, tt := range []struct {
		yaml, field string
		line        int
	}{
		{"candidates:\n  - name: a\n", "candidates[0].url", 2},
		{"candidates:\n  - name: a\n    url: x\n    labels: {gpus: two}\n", "candidates[0].labels.gpus", 4},
		{"candidates:\n  - name: a\n    url: x\n  - name: a\n    url: y\n", "candidates[1].name", 4},
		{"candidates:\n  - name: 'a b'\n    url: x\n", "candidates[0].name", 2},
		{"candidates:\n  - name: a\n    url: x\n    sim: {}\n", "candidates[0].sim", 4},
		{"candidates:\n  - name: a\n    urll: x\n", "candidates[0].urll", 3},
		{"objective: chat\n", "candidates", 1},
	} {
		_, err := ParseCandidates([]byte(tt.yaml))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || fe.Line != tt.line {
			t.Errorf("%q: %v, want %s at line %d", tt.yaml, err, tt.field, tt.line)
		}
	}
	c, err := ParseTarget("name=h100,url=http://10.0.0.2:8000,gpus=1,cost=4,model=m")
	if err != nil || c.Name != "h100" || c.Model != "m" || c.Labels["gpus"] != "1" {
		t.Errorf("ParseTarget: %+v %v", c, err)
	}
	if _, err := ParseTarget("url=http://x"); err == nil {
		t.Error("a target needs a name")
	}
}
