package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// Header is the line above the table: what was measured and with what.
// The workload is the one actually sent: a dataset, multi-turn sessions or
// long-context prompts are named with the mean lengths measured, since the
// length flags do not describe them.
func Header(s *metrics.Summary) string {
	if s.Run == nil {
		return ""
	}
	t := s.Run.Target
	model := orDash(t.Model)
	if t.ModelPicked {
		model += " (the server's only one)"
	}
	return fmt.Sprintf("servebench · %s · %s · model %s · %s · seed %d",
		targetName(s.Run), t.API, model, workloadText(s), s.Run.Seed)
}

// targetName names the server, and says when its figures are in model
// time rather than the time the client measured.
func targetName(run *record.Run) string {
	t := run.Target
	name := t.URL
	if t.Simulated {
		name = "simulated server"
		if d := t.Server[record.ServerDevice]; d != "" {
			name += " (" + d + ")"
		}
		if ch := t.Server[record.ServerSimChanges]; ch != "" {
			name += " · changed: " + ch
		}
	}
	if sc := run.Scale(); sc != 1 {
		name += fmt.Sprintf(" · ran %s× faster than it models; figures in model time", strconv.FormatFloat(sc, 'g', -1, 64))
	}
	return name
}

// workloadText describes what was sent: the length distributions asked
// for, or the workload's source with the measured mean lengths.
func workloadText(s *metrics.Summary) string {
	if s.Run.Trace != nil {
		return traceText(s)
	}
	src := workloadSource(s.Run.Workload)
	switch {
	case len(s.Run.Workloads) > 0 && src != "":
		return src + " · " + matrixText(s.Run)
	case len(s.Run.Workloads) > 0:
		return matrixText(s.Run)
	case src == "":
		return fmt.Sprintf("prompt %s tok · output %s tok", s.Run.PromptTokens, s.Run.OutputTokens)
	}
	in, out, ok := measuredLengths(s.Points)
	if !ok {
		return src + " · no request completed"
	}
	return fmt.Sprintf("%s · prompt %s tok · output %s tok (means sent)", src, num(in, 0), num(out, 0))
}

// workloadSource names a workload beyond two length distributions, from
// run.json's workload (docs/WORKLOADS.md), or "" when there is none.
func workloadSource(w any) string {
	if w == nil {
		return ""
	}
	b, err := json.Marshal(w)
	if err != nil {
		return ""
	}
	var f struct {
		Dataset      string `json:"dataset"`
		MultiTurn    int    `json:"multi_turn"`
		LongContext  int    `json:"long_context"`
		SharedPrefix int    `json:"shared_prefix"`
	}
	if json.Unmarshal(b, &f) != nil {
		return ""
	}
	var parts []string
	if f.Dataset != "" {
		parts = append(parts, "dataset "+f.Dataset)
	}
	if f.MultiTurn > 0 {
		parts = append(parts, fmt.Sprintf("sessions of up to %d turns", f.MultiTurn))
	}
	if f.LongContext > 0 {
		parts = append(parts, fmt.Sprintf("long context %d tok", f.LongContext))
	}
	if f.SharedPrefix > 0 {
		parts = append(parts, fmt.Sprintf("shared prefix %d tok", f.SharedPrefix))
	}
	return strings.Join(parts, ", ")
}

// measuredLengths is the mean prompt and output length of every completed
// request of the run.
func measuredLengths(ps []metrics.PointSummary) (in, out float64, ok bool) {
	n := 0
	for i := range ps {
		c := ps[i].Requests.Completed
		in += ps[i].PromptTokensMean * float64(c)
		out += ps[i].OutputTokensMean * float64(c)
		n += c
	}
	if n == 0 {
		return 0, 0, false
	}
	return in / float64(n), out / float64(n), true
}
