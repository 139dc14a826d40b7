package slo

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
)

func TestWorkloadDifference(t *testing.T) {
	chat := &Objective{Name: "chat", Workload: workload.Spec{PromptTokens: "lognormal:1024,768,32,8192", OutputTokens: "256"}}
	plain := &Objective{Name: "plain"} // no workload: the defaults, 512 → 128
	tests := []struct {
		name string
		o    *Objective
		run  *record.Run
		want []string // "" means no difference
	}{
		{"same lengths", chat, &record.Run{PromptTokens: "lognormal:1024,768,32,8192", OutputTokens: "256"}, nil},
		{"defaults on both sides", plain, &record.Run{PromptTokens: "512", OutputTokens: "128"}, nil},
		{"no run.json", chat, nil, nil},
		{"other lengths", chat, &record.Run{PromptTokens: "512", OutputTokens: "128"},
			[]string{"objective chat's", "prompt_tokens 512 (the objective's: lognormal:1024,768,32,8192)", "output_tokens 128 (the objective's: 256)"}},
		{"a dataset", plain, &record.Run{PromptTokens: "512", OutputTokens: "128",
			Workload: map[string]any{"dataset": "chats.jsonl", "multi_turn": 3}},
			[]string{"dataset chats.jsonl (the objective's: none)", "multi_turn 3 (the objective's: none)"}},
	}
	for _, tt := range tests {
		got := WorkloadDifference(tt.o, tt.run)
		if tt.want == nil && got != "" {
			t.Errorf("%s: %q, want no difference", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
	}
}
