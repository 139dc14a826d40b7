package metrics

import (
	"fmt"
	"sort"
	"strings"

	"github.com/servebench/servebench/internal/stats"
)

// warnings are what a point's figures do not say by themselves: failures,
// outputs shorter or prompts other than asked, cancellations, a load not
// held, drift, tails resting on too few requests.
func (p *pointAgg) warnings(s PointSummary) []string {
	w := []string{}
	if s.AllFailed {
		w = append(w, fmt.Sprintf("every request failed (%s): nothing about the server's speed was measured (see the errors by class)", ErrorCounts(s.Requests.Errors)))
	}
	if p.shortfall > 0 {
		w = append(w, fmt.Sprintf("%d of %d requests returned fewer output tokens than requested (mean shortfall %.1f tokens): the server may ignore ignore_eos/min_tokens, so per-request speeds cover shorter outputs than asked",
			p.shortfall, p.completed, float64(p.shortfallToks)/float64(p.shortfall)))
	}
	if p.mismatch > 0 {
		msg := fmt.Sprintf("%d of %d requests had a prompt length (per the server) different from the one requested", p.mismatch, p.completed)
		if p.mismatchChat {
			msg += "; with a chat API the server's chat template adds tokens unless its tokenizer endpoint could count the templated prompt"
		}
		w = append(w, msg)
	}
	if p.cancelled > 0 {
		w = append(w, fmt.Sprintf("%d requests were cancelled when the run was interrupted; they are excluded from latencies", p.cancelled))
	}
	w = append(w, p.loadWarnings(s)...)
	if p.stream != nil && p.stream.broken && len(s.Slices) > 0 {
		w = append(w, "slices approximate: a request was sent before the point's start as run.json gives it (an edited or foreign run.json?); the point's other figures are unaffected")
	}
	if p.sw != nil && p.sw.late {
		w = append(w, "concurrency figures approximate (concurrency_max, concurrency_held_share, slices' in_flight_mean): a request was sent before an instant already swept, longer than any seen before it, or a multi-turn request came in a point begun without sessions")
	}
	if d := s.Drift.Warning(); d != "" {
		w = append(w, d)
	}
	if thin := thinTails(s); thin != "" {
		w = append(w, fmt.Sprintf("too few requests for the tail percentiles shown (%s): a p95 needs at least 20 requests, a p99 100", thin))
	}
	return w
}

// ErrorCounts lists error classes with their counts, most frequent first
// (ties by name): "connect 60, http_4xx 4".
func ErrorCounts(errs map[string]int) string {
	parts := make([]string, 0, len(errs))
	for _, c := range ErrorClasses(errs) {
		parts = append(parts, fmt.Sprintf("%s %d", c, errs[c]))
	}
	return strings.Join(parts, ", ")
}

// ErrorClasses orders error classes most frequent first, ties by name.
func ErrorClasses(errs map[string]int) []string {
	out := make([]string, 0, len(errs))
	for c := range errs {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if errs[out[i]] != errs[out[j]] {
			return errs[out[i]] > errs[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// thinTails lists the printed tail quantiles that rest on too few samples,
// named as the table's columns and the SLOs name them: per-request speed
// is judged by the speed most requests reached, so its p5 reads "speed p95".
func thinTails(s PointSummary) string {
	var parts []string
	for _, d := range []struct {
		name string
		d    stats.Dist
		keys []string
	}{
		{"TTFT", s.TTFT, []string{"p95", "p99"}},
		{"E2E", s.E2E, []string{"p95", "p99"}},
		{"speed", s.DecodeTPSReq, []string{"p5"}},
	} {
		t := stats.ThinTails(d.d, d.keys...)
		for i, k := range t {
			if d.name == "speed" && k == "p5" {
				t[i] = "p95"
			}
		}
		if len(t) > 0 {
			parts = append(parts, d.name+" "+strings.Join(t, " "))
		}
	}
	return strings.Join(parts, ", ")
}
