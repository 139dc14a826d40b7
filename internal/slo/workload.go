package slo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
)

// WorkloadDifference says how a recorded run's workload differs from the
// one an objective specifies ("" when they agree, or when the run did not
// record its workload). An objective's SLOs judged on another workload
// judge something else: the report keeps the verdict and warns.
func WorkloadDifference(o *Objective, run *record.Run) string {
	if run == nil {
		return ""
	}
	got := recordedSpec(run)
	want := o.Workload
	var diffs []string
	diff := func(key, g, w string) {
		if g != w {
			diffs = append(diffs, fmt.Sprintf("%s %s (the objective's: %s)", key, orNone(g), orNone(w)))
		}
	}
	if len(run.Workloads) > 0 || len(o.Workloads) > 0 {
		diff("workloads", strings.Join(run.WorkloadLabels(), ", "), strings.Join(objectiveCells(o), ", "))
	} else {
		diff("prompt_tokens", dist(got.PromptTokens, workload.DefaultPromptTokens), dist(want.PromptTokens, workload.DefaultPromptTokens))
		diff("output_tokens", dist(got.OutputTokens, workload.DefaultOutputTokens), dist(want.OutputTokens, workload.DefaultOutputTokens))
	}
	diff("dataset", got.Dataset, want.Dataset)
	for _, f := range []struct {
		key  string
		g, w int
	}{
		{"multi_turn", got.MultiTurn, want.MultiTurn}, {"long_context", got.LongContext, want.LongContext},
		{"shared_prefix", got.SharedPrefix, want.SharedPrefix}, {"prefix_groups", got.PrefixGroups, want.PrefixGroups},
		{"max_prompt_tokens", got.MaxPromptTokens, want.MaxPromptTokens}, {"context_tokens", got.ContextTokens, want.ContextTokens},
	} {
		diff(f.key, nonZero(f.g), nonZero(f.w))
	}
	diff("think_time", duration(got.ThinkTime), duration(want.ThinkTime))
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("the recorded workload differs from objective %s's: %s; its SLOs were set for the objective's workload",
		o.Name, strings.Join(diffs, ", "))
}

// objectiveCells are the labels of the objective's workloads: its list,
// or its one workload's (as a one-cell list, for comparing with a matrix).
func objectiveCells(o *Objective) []string {
	var out []string
	for _, c := range o.Workloads {
		out = append(out, c.Label())
	}
	if out == nil {
		w := o.Workload
		out = []string{record.WorkloadLabel(dist(w.PromptTokens, workload.DefaultPromptTokens), dist(w.OutputTokens, workload.DefaultOutputTokens))}
	}
	return out
}

// recordedSpec is the workload run.json says was sent.
func recordedSpec(run *record.Run) workload.Spec {
	var s workload.Spec
	if run.Workload != nil {
		if b, err := json.Marshal(run.Workload); err == nil {
			_ = json.Unmarshal(b, &s) // an unreadable workload compares as none
		}
	}
	s.PromptTokens, s.OutputTokens = cmp.Or(run.PromptTokens, s.PromptTokens), cmp.Or(run.OutputTokens, s.OutputTokens)
	return s
}

// dist is a length distribution in canonical form, def when unset.
func dist(s, def string) string {
	d, err := workload.ParseLengthDist(cmp.Or(s, def))
	if err != nil {
		return s
	}
	return d.String()
}

func nonZero(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func duration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func orNone(s string) string { return cmp.Or(s, "none") }
