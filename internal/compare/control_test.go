package compare

import (
	"maps"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

func baseRun() *record.Run {
	return &record.Run{Schema: record.RunSchema, PromptTokens: "512", OutputTokens: "128", IgnoreEOS: true,
		Target: record.Target{URL: "http://gpu-a:8000", API: "openai-chat", Model: "llama",
			Server: map[record.ServerKey]string{"model_id": "llama", "quantization": "q4_K_M", "runtime": "llama.cpp",
				"runtime_version": "b4000", "max_model_len": "8192", "sampling.temperature": "0.8", "endpoints": "/v1/models"}}}
}

func TestDifferences(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(b *record.Run)
		lb         []record.Load
		want       []string // Difference.Text, in order
		controlled bool
	}{
		{"same setup on another host", func(b *record.Run) { b.Target.URL = "http://gpu-b:8000"; b.Target.Server["endpoints"] = "/props" }, nil, nil, true},
		{"quantization", func(b *record.Run) { b.Target.Server["quantization"] = "q8_0" }, nil,
			[]string{"different quantization: q4_K_M vs q8_0 — not a clean hardware comparison"}, false},
		{"runtime version and context", func(b *record.Run) {
			b.Target.Server["runtime_version"] = "b4100"
			b.Target.Server["max_model_len"] = "4096"
		}, nil, []string{"different context length: 8192 vs 4096 — not a clean hardware comparison",
			"different runtime version: b4000 vs b4100 — not a clean hardware comparison"}, false},
		{"sampling", func(b *record.Run) { b.Target.Server["sampling.temperature"] = "0" }, nil,
			[]string{"different sampling.temperature: 0.8 vs 0 — not a clean hardware comparison"}, false},
		// A property only one server reports cannot be checked: listed,
		// but it does not make the comparison uncontrolled.
		{"revision reported by B only", func(b *record.Run) { b.Target.Server["model_revision"] = "abc123" }, nil,
			[]string{"model revision unchecked: (not reported) vs abc123 — only one run reports it, so it cannot be checked"}, true},
		{"workload", func(b *record.Run) { b.PromptTokens, b.IgnoreEOS = "2048", false }, nil,
			[]string{"different prompt tokens: 512 vs 2048 — not the same workload: the runs timed different requests",
				"different ignore_eos: true vs false — not the same workload: the runs timed different requests"}, false},
		{"time scale", func(b *record.Run) { b.TimeScale = 20 }, nil,
			[]string{"different time scale: 1 vs 20 — both are reported in model time, but the client's own overheads count 1 times in A and 20 times in B"}, false},
		{"load policy", func(*record.Run) {}, []record.Load{{Rate: 2, MaxConcurrency: 8}}, []string{
			"different load policy: closed loop vs open loop capped at 8 in flight — not the same load policy: the same label is a different load"}, false},
		// The servers' model ids differ: the requested names say no more.
		{"model", func(b *record.Run) { b.Target.Model, b.Target.Server["model_id"] = "qwen", "qwen" }, nil,
			[]string{"different model: llama vs qwen — not a clean hardware comparison"}, false},
	}
	for _, tt := range tests {
		a, b := baseRun(), baseRun()
		b.Target.Server = maps.Clone(a.Target.Server)
		tt.edit(b)
		la, lb := []record.Load{{Concurrency: 4}}, tt.lb
		if lb == nil {
			lb = la
		}
		ds := Differences(a, b, la, lb)
		var got []string
		for _, d := range ds {
			got = append(got, d.Text())
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		if controlled(ds) != tt.controlled {
			t.Errorf("%s: controlled %v, want %v", tt.name, controlled(ds), tt.controlled)
		}
	}
}

// Records without run.json say nothing of their server: nothing can be
// checked, and the comparison says so.
func TestDifferencesWithoutRun(t *testing.T) {
	ds := Differences(baseRun(), nil, nil, nil)
	if len(ds) != 1 || ds[0].Known || !strings.Contains(ds[0].Text(), "run.json vs (no run.json)") {
		t.Errorf("%+v", ds)
	}
}

// Two runs of the built-in simulator with different configurations are
// two different servers: every setting that differs is listed, loudly.
func TestSimDifferences(t *testing.T) {
	simRun := func(settings string) *record.Run {
		r := baseRun()
		r.Target.Simulated = true
		r.Target.Server = map[record.ServerKey]string{"model_id": "sim", "runtime": "servebench-sim"}
		if settings != "" {
			r.Target.Server[record.ServerSimSettings] = settings
		}
		return r
	}
	base := `{"device.mem_bandwidth_gbs":"3350","engine.max_num_seqs":"8"}`
	tests := []struct {
		name       string
		a, b       string
		want       []string
		controlled bool
	}{
		{"same configuration", base, base, nil, true},
		{"20% less bandwidth", base, `{"device.mem_bandwidth_gbs":"2680","engine.max_num_seqs":"8"}`,
			[]string{"different simulator device.mem_bandwidth_gbs: 3350 vs 2680 — a different simulated server: its figures are another model's, not a controlled comparison"}, false},
		{"a setting one side lacks", base, `{"device.mem_bandwidth_gbs":"3350"}`,
			[]string{"different simulator engine.max_num_seqs: 8 vs (not set) — a different simulated server: its figures are another model's, not a controlled comparison"}, false},
		// A run recorded before the settings were: unchecked.
		{"older run", base, "", []string{"simulator configuration unchecked: recorded vs (not reported) — only one run reports it, so it cannot be checked"}, true},
	}
	for _, tt := range tests {
		ds := Differences(simRun(tt.a), simRun(tt.b), nil, nil)
		var got []string
		for _, d := range ds {
			got = append(got, d.Text())
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") || controlled(ds) != tt.controlled {
			t.Errorf("%s:\n got %q (controlled %v)\nwant %q (%v)", tt.name, got, controlled(ds), tt.want, tt.controlled)
		}
	}
}
