package enginecheck

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sweep"
)

func slotConfig(np string, ttft1, ttft2 float64) sweep.Config {
	f := func(v float64) *float64 { return &v }
	return sweep.Config{Name: "np-" + np, Params: map[string]string{"np": np},
		Startup: &sweep.Startup{ReadyS: f(2.5), FirstTokenS: f(2.4)},
		Points:  []sweep.Point{{Load: record.Load{Concurrency: 1}, TTFTP50: f(ttft1)}, {Load: record.Load{Concurrency: 2}, TTFTP50: f(ttft2)}}}
}

func TestCheckSweep(t *testing.T) {
	failed := "exited with status 1 before it was ready"
	for _, c := range []struct {
		name string
		cfg  sweep.Config
		want string // a part of the problem, "" for none
	}{
		{"one slot queues", slotConfig("1", 100, 260), ""},
		{"two slots do not", slotConfig("2", 100, 130), ""},
		{"one slot that does not queue", slotConfig("1", 100, 120), "want ≥ 1.7×"},
		{"two slots that queue", slotConfig("2", 100, 200), "want < 1.7×"},
		{"failed", sweep.Config{Name: "np-1", Params: map[string]string{"np": "1"}, Error: &failed}, "failed"},
		{"no start-up", func() sweep.Config { c := slotConfig("1", 100, 260); c.Startup = nil; return c }(), "no start-up"},
		{"no point at 2", func() sweep.Config { c := slotConfig("1", 100, 260); c.Points = c.Points[:1]; return c }(), "no TTFT p50"},
	} {
		rows := CheckSweep(&sweep.File{Configs: []sweep.Config{c.cfg}}, "np")
		got := rows[0].Problem
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: problem %q, want %q", c.name, got, c.want)
		}
	}
}
