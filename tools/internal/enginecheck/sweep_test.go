package enginecheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sweep"
)

// slotConfig is a configuration of np slots whose records (read by
// fakeRecords) have, at 1 and at 2 users, the given median wait before the
// server began on the prompt; every answer takes 100 ms to decode.
func slotConfig(np string, wait1, wait2 float64) sweep.Config {
	return slotConfigSlow(np, wait1, wait2, 1, 1)
}

// slotConfigSlow is slotConfig with the 1-user point's prompts and answers
// slow1 times as long (a point measured on a busier machine) and the
// 2-user point's answers slow2 times as long (two sequences sharing the
// cores).
func slotConfigSlow(np string, wait1, wait2, slow1, slow2 float64) sweep.Config {
	f := func(v float64) *float64 { return &v }
	return sweep.Config{Name: "np-" + np, Params: map[string]string{"np": np}, RunDir: fmt.Sprintf("%s/%g/%g/%g/%g", np, wait1, wait2, slow1, slow2),
		Startup: &sweep.Startup{ReadyS: f(2.5), FirstTokenS: f(2.4)}}
}

// fakeRecords reads the records slotConfig's directory name describes:
// three requests at each of 1 and 2 users, prompt evaluation 80 ms, and
// one request that is left out (a warm-up with a long wait).
func fakeRecords(dir string, each func(*record.Record)) error {
	var np string
	var waits [2]float64
	var slow1, slow2 float64
	if _, err := fmt.Sscanf(strings.ReplaceAll(dir, "/", " "), "%s %g %g %g %g", &np, &waits[0], &waits[1], &slow1, &slow2); err != nil {
		return err
	}
	prompt, answer := [2]float64{80 * slow1, 80}, [2]float64{100 * slow1, 100 * slow2}
	ms := func(v float64) int64 { return int64(v * 1e6) }
	each(&record.Record{Phase: record.PhaseWarmup, Load: record.Load{Concurrency: 1}, FirstTokenNS: ms(5000), EndNS: ms(5100),
		Server: &record.ServerTiming{PromptEvalDuration: ms(80)}})
	for c := 1; c <= 2; c++ {
		for i, jitter := range []float64{-5, 0, 7} {
			sent := int64(i) * ms(1000)
			first := sent + ms(waits[c-1]+jitter+prompt[c-1])
			each(&record.Record{Phase: record.PhaseMeasured, Load: record.Load{Concurrency: c}, SentNS: sent, FirstTokenNS: first,
				EndNS: first + ms(answer[c-1]), Server: &record.ServerTiming{PromptEvalDuration: ms(prompt[c-1])}})
		}
	}
	return nil
}

func TestCheckSweep(t *testing.T) {
	failed := "exited with status 1 before it was ready"
	for _, c := range []struct {
		name string
		cfg  sweep.Config
		want string // a part of the problem, "" for none
	}{
		{"one slot queues: waits out a prompt and an answer", slotConfig("1", 10, 260), ""},
		{"two slots do not", slotConfig("2", 10, 20), ""},
		{"two slots, waiting out the other's prompt", slotConfig("2", 10, 90), ""},
		{"one slot that waits out a prompt only", slotConfig("1", 10, 90), "want ≥ 0.5"},
		{"two slots that queue", slotConfig("2", 10, 160), "want < 0.5"},
		// Counted in the 2-user point's units: one slot waits a 2-user
		// prompt and answer whatever the 1-user point took; two slots
		// sharing the cores decode slower, and wait a prompt at most.
		{"one slot, its 1-user point slow", slotConfigSlow("1", 10, 190, 1.5, 1), ""},
		{"two slots sharing the cores", slotConfigSlow("2", 10, 90, 1, 3), ""},
		{"two slots that queue, sharing the cores", slotConfigSlow("2", 10, 400, 1, 3), "want < 0.5"},
		{"failed", sweep.Config{Name: "np-1", Params: map[string]string{"np": "1"}, Error: &failed}, "failed"},
		{"no start-up", func() sweep.Config { c := slotConfig("1", 10, 260); c.Startup = nil; return c }(), "no start-up"},
		{"no records", func() sweep.Config { c := slotConfig("1", 10, 260); c.RunDir = "missing"; return c }(), "its records"},
	} {
		rows := CheckSweep(&sweep.File{Configs: []sweep.Config{c.cfg}}, "np", fakeRecords)
		got := rows[0].Problem
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: problem %q, want %q", c.name, got, c.want)
		}
	}
	// the figure itself: (260 - 10 - 80) ms more wait, beyond an 80 ms
	// prompt, over a 100 ms answer
	if r := CheckSweep(&sweep.File{Configs: []sweep.Config{slotConfig("1", 10, 260)}}, "np", fakeRecords)[0]; r.Queued < 1.69 || r.Queued > 1.71 {
		t.Errorf("queued %.3f answers, want 1.70", r.Queued)
	}
}
