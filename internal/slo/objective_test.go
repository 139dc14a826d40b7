package slo

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

const goodObjective = `name: mine
model: llama-3.1-8b
quantization: fp8
workload:
  prompt_tokens: uniform:100,200
  output_tokens: 64
load:
  concurrency: [1, 2, 4]
  requests: 50
  warmup: 2
context_length: 4096
no_oom: true
priority: throughput
slos:
  - ttft p95 <= 1.5s
  - speed p95 >= 20 tok/s
`

func TestParseObjective(t *testing.T) {
	o, err := ParseObjective([]byte(goodObjective))
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "mine" || o.Model != "llama-3.1-8b" || o.Quantization != "fp8" || o.ContextLength != 4096 ||
		o.Priority != PriorityThroughput || o.Workload.PromptTokens != "uniform:100,200" || o.Load.Requests != 50 {
		t.Errorf("fields: %+v", o)
	}
	// Target defaults to the highest load; no_oom adds its SLO.
	if got := o.Load.TargetLoad(); got != (record.Load{Concurrency: 4}) {
		t.Errorf("target %+v", got)
	}
	checks := o.Checks()
	if len(checks) != 3 || checks[2].Expr != "out_of_memory <= 0" {
		t.Errorf("checks %v", checks)
	}
	// --slo replaces the SLO on the same metric and percentile, adds others.
	s, _ := Parse("ttft p95 <= 500ms")
	o.SetSLO(s)
	s, _ = Parse("ttft p99 <= 2s")
	o.SetSLO(s)
	if len(o.SLOs) != 3 || o.SLOs[0].Value != 500 {
		t.Errorf("SetSLO: %v", o.SLOs)
	}
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `"workload":{"output_tokens":"64","prompt_tokens":"uniform:100,200"}`) {
		t.Errorf("workload JSON uses the file's keys: %s", b)
	}
}

// TestObjectiveErrors: every invalid file names the field and its line.
func TestObjectiveErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		field      string
		line       int
	}{
		{"unknown field", "name: x\nsloz:\n  - ttft p95 <= 1s\n", "sloz", 2},
		{"bad slo", "load: {concurrency: [1]}\nslos:\n  - ttft p95 <= 1s\n  - ttft p95 >= 2s\n", "slos[1]", 4},
		{"bad concurrency", "load:\n  concurrency: [1, two, 4]\n", "load.concurrency[1]", 2},
		{"zero concurrency", "load:\n  concurrency:\n    - 1\n    - 0\n", "load.concurrency[1]", 4},
		{"both loops", "load:\n  concurrency: [1]\n  rate: [2]\n", "load", 1},
		{"no load", "name: x\nslos: [ttft p95 <= 1s]\n", "load", 1},
		{"fractional target", "load:\n  concurrency: [1, 2]\n  target: 1.5\n", "load.target", 3},
		{"bad duration", "load:\n  rate: [1]\n  duration: soon\n", "load.duration", 3},
		{"bad dist", "load: {concurrency: [1]}\nworkload:\n  prompt_tokens: zipf:2\n", "workload.prompt_tokens", 3},
		{"unknown workload field", "workload:\n  promt_tokens: 5\n", "workload.promt_tokens", 2},
		{"bool as text", "load: {concurrency: [1]}\nno_oom: yes\n", "no_oom", 2},
		{"priority", "load: {concurrency: [1]}\npriority: speed\n", "priority", 2},
		{"duplicate slo", "load: {concurrency: [1]}\nslos:\n - ttft p95 <= 1s\n - ttft p95 <= 2s\n", "slos[1]", 4},
		{"duplicate key", "name: a\nname: b\n", "", 2},
		{"not a mapping", "- a\n- b\n", "objective", 1},
		{"empty", "", "objective", 1},
		{"tab indentation", "load:\n\tconcurrency: [1]\n", "objective", 2},
		{"max concurrency on closed loop", "load:\n  concurrency: [1]\n  max_concurrency: 4\n", "load.max_concurrency", 3},
		// a list of workloads: two or more, each sendable, none repeated, lengths only in the list
		{"one workload listed", "load: {concurrency: [1]}\nworkloads:\n  - {prompt_tokens: 128}\n", "workloads", 2},
		{"bad cell", "load: {concurrency: [1]}\nworkloads:\n  - {prompt_tokens: 128}\n  - {prompt_tokens: zipf:2}\n", "workloads[1]", 4},
		{"repeated cell", "load: {concurrency: [1]}\nworkloads:\n  - {prompt_tokens: 128}\n  - {prompt_tokens: fixed:128, output_tokens: 128}\n", "workloads[1]", 4},
		{"unknown cell field", "load: {concurrency: [1]}\nworkloads:\n  - {prompt_tokens: 128}\n  - {dataset: x}\n", "workloads[1].dataset", 4},
		{"lengths twice", "load: {concurrency: [1]}\nworkload: {prompt_tokens: 64}\nworkloads:\n  - {prompt_tokens: 128}\n  - {prompt_tokens: 256}\n", "workload.prompt_tokens", 2},
		{"uncrossable", "load: {concurrency: [1]}\nworkload: {multi_turn: 3}\nworkloads:\n  - {prompt_tokens: 128}\n  - {prompt_tokens: 256}\n", "workload.multi_turn", 2},
	}
	for _, tt := range tests {
		_, err := ParseObjective([]byte(tt.yaml))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a *FieldError", tt.name, err)
			continue
		}
		if (tt.field != "" && fe.Field != tt.field) || fe.Line != tt.line {
			t.Errorf("%s: %q at line %d, want %q at line %d (%v)", tt.name, fe.Field, fe.Line, tt.field, tt.line, err)
		}
		if !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: %q does not say the line", tt.name, err)
		}
	}
}

// TestPresets: every preset parses, complete, in PresetNames' order.
func TestPresets(t *testing.T) {
	all, err := Presets()
	if err != nil || len(all) != len(PresetNames) {
		t.Fatalf("got %d presets, %v; want %d", len(all), err, len(PresetNames))
	}
	for i, name := range PresetNames {
		o := all[i]
		if o.Name != name || o.Description == "" || len(o.SLOs) == 0 || o.Priority == "" {
			t.Errorf("%s: incomplete: %+v", name, o)
		}
		// The target load is one of the listed loads.
		found := false
		for _, l := range o.Load.Levels() {
			found = found || l == o.Load.TargetLoad()
		}
		if !found {
			t.Errorf("%s: target %+v not among the loads", name, o.Load.TargetLoad())
		}
		b, _ := PresetYAML(name)
		if !strings.Contains(string(b), "#") {
			t.Errorf("%s: no comments saying where the numbers come from", name)
		}
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "chat") {
		t.Errorf("unknown preset: %v", err)
	}
}

// FuzzParseObjective: arbitrary bytes never panic; a parsed objective is
// valid and its SLOs re-parse.
func FuzzParseObjective(f *testing.F) {
	f.Add([]byte(goodObjective))
	for _, n := range PresetNames {
		b, _ := PresetYAML(n)
		f.Add(b)
	}
	f.Add([]byte("load: {rate: [0.5, 1e6]}\nslos: [error_rate <= 1%]\n"))
	f.Add([]byte("load: &a {concurrency: [1]}\nx: *a\n"))
	f.Add([]byte("load: {concurrency: [1]}\nworkloads:\n  - {prompt_tokens: 128, output_tokens: 64}\n  - {prompt_tokens: \"lognormal:8192,2048\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseObjective(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if err := o.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		for _, s := range o.Checks() {
			if _, err := Parse(s.Expr); err != nil {
				t.Fatalf("SLO %q does not re-parse: %v", s.Expr, err)
			}
		}
		_ = o.Load.TargetLoad()
	})
}

// TestObjectiveWorkloads: an objective may list its workloads; they are
// kept in canonical form, in the order given, and written to JSON.
func TestObjectiveWorkloads(t *testing.T) {
	o, err := ParseObjective([]byte("name: m\nload: {concurrency: [1, 4]}\nslos: [ttft p95 <= 1s]\nworkload: {shared_prefix: 32}\n" +
		"workloads:\n  - {prompt_tokens: fixed:2048, output_tokens: 512}\n  - {prompt_tokens: 128}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range o.Workloads {
		got = append(got, c.Label())
	}
	if strings.Join(got, "; ") != "in=2048 out=512; in=128 out=128" {
		t.Errorf("workloads %q", got)
	}
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `"workloads":[{"prompt_tokens":"2048","output_tokens":"512"},{"prompt_tokens":"128","output_tokens":"128"}]`) ||
		!strings.Contains(string(b), `"workload":{"shared_prefix":32}`) {
		t.Errorf("JSON %s", b)
	}
}

// TestOverlay: an SLO given replaces the objective's on the same metric and
// percentile and adds one on another; a target given replaces the
// objective's, none keeps it.
func TestOverlay(t *testing.T) {
	mustParse := func(s string) SLO {
		x, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		name   string
		target float64
		want   string // the SLOs, then the target
	}{
		{"a target given", 8, "ttft p95 <= 1s; speed p50 >= 20 tok/s @8"},
		{"none given", 0, "ttft p95 <= 1s; speed p50 >= 20 tok/s @4"},
	} {
		o := &Objective{SLOs: []SLO{mustParse("ttft p95 <= 2s")}, Load: Load{Target: 4}}
		o.Overlay([]SLO{mustParse("ttft p95 <= 1s"), mustParse("speed p50 >= 20 tok/s")}, tc.target)
		var got []string
		for _, s := range o.SLOs {
			got = append(got, s.String())
		}
		if g := strings.Join(got, "; ") + " @" + strconv.FormatFloat(o.Load.Target, 'g', -1, 64); g != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, g, tc.want)
		}
	}
}
