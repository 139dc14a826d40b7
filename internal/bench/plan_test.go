package bench

import (
	"strings"
	"testing"

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
