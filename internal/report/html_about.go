package report

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/servebench/servebench/internal/metrics"
)

// aboutSection is one table of facts at the page's end: the workload, the
// server's self-description, the environment.
type aboutSection struct {
	Title string     `json:"title"`
	Rows  [][]string `json:"rows"`
}

// about states what was measured, on what and with what, from run.json
// and the telemetry; a records file without run.json knows none of it.
func about(s *metrics.Summary) []aboutSection {
	if s.Run == nil {
		return []aboutSection{{Title: "Run", Rows: [][]string{{"context", "no run.json: records alone"}}}}
	}
	return []aboutSection{aboutWorkload(s), aboutServer(s), aboutEnvironment(s)}
}

func aboutWorkload(s *metrics.Summary) aboutSection {
	r := s.Run
	rows := [][]string{
		{"sent", workloadText(s)},
		{"prompt tokens", r.PromptTokens},
		{"output tokens", r.OutputTokens},
		{"seed", strconv.FormatUint(r.Seed, 10)},
		{"ignore_eos", strconv.FormatBool(r.IgnoreEOS)},
		{"tokenizer", orDash(r.Tokenizer)},
	}
	if r.Workload != nil {
		b, _ := json.Marshal(r.Workload)
		rows = append(rows, []string{"workload", string(b)})
	}
	if r.SliceS > 0 {
		rows = append(rows, []string{"slices", strconv.FormatFloat(r.SliceS, 'g', -1, 64) + " s"})
	}
	return aboutSection{Title: "Workload", Rows: rows}
}

// aboutServer is the target and what the server said about itself.
func aboutServer(s *metrics.Summary) aboutSection {
	t := s.Run.Target
	rows := [][]string{
		{"target", targetName(s.Run)},
		{"api", t.API},
		{"model", orDash(t.Model)},
	}
	for _, k := range slices.Sorted(maps.Keys(t.Server)) {
		rows = append(rows, []string{string(k), t.Server[k]})
	}
	return aboutSection{Title: "Server", Rows: rows}
}

// aboutEnvironment is the load generator and the machine the telemetry
// saw (GPUs by name).
func aboutEnvironment(s *metrics.Summary) aboutSection {
	r := s.Run
	rows := [][]string{
		{"servebench", orDash(r.Version)},
		{"started", orDash(r.Started)},
		{"ended", orDash(r.Ended)},
		{"client CPUs", strconv.Itoa(r.ClientCPUs)},
		{"interrupted", strconv.FormatBool(r.Interrupted)},
	}
	seen := map[string]bool{}
	for _, p := range s.Points {
		if p.Telemetry == nil {
			continue
		}
		for _, g := range p.Telemetry.GPUs {
			key := g.Instance + " " + strconv.Itoa(g.Index)
			if !seen[key] && g.Name != "" {
				seen[key] = true
				rows = append(rows, []string{"GPU " + strconv.Itoa(g.Index), g.Name})
			}
		}
	}
	return aboutSection{Title: "Environment", Rows: rows}
}
