package enginecheck

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/sweep"
)

// queuedShare separates an engine that queues its second user from one
// that serves both at once, in a sweep over its slots at 1 and 2 users.
// The wait of a request is its TTFT less the server's own prompt
// evaluation time (Ollama's prompt_eval_duration): the time before the
// server began on its prompt. With one slot the second user waits out the
// other's whole request, its prompt and its answer. With two the server
// begins on both, but evaluates one prompt at a time: a request that
// arrives during the other's prompt evaluation waits for it (measured: in
// a closed loop of 2 users, every other request waited about one prompt,
// 110 ms of 250). So the wait counted is the median at 2 users less that
// at 1 and less one prompt's evaluation, in answers, both at 2 users (the
// requests waited for are those): about one answer with one slot, below
// zero with two (on two runs' records: 1.04 and about 1.01 with one slot,
// −0.25 and about −0.14 with two; counted in the 1-user point's units, a
// slow 1-user point brought one slot down to 0.71, and counting the
// prompt's wait as queueing brought two slots up to 0.40). TTFT alone does not tell them
// apart on a CPU: two slots share its cores and TTFT at 2 users nearly
// doubles either way (1.90× with two slots, 2.71× with one, measured).
const queuedShare = 0.5

// SweepRow is one configuration of a slot sweep, as checked.
type SweepRow struct {
	Config string
	Slots  int
	// ReadyS and FirstTokenS are its start-up; Queued the median wait at
	// 2 users less that at 1 and less one prompt's evaluation, in answers
	// (the medians of prompt evaluation and decode time at 2 users).
	ReadyS, FirstTokenS, Queued float64
	Problem                     string
}

// EachRecord reads a run directory's records, as rundir.Records does.
type EachRecord func(dir string, each func(*record.Record)) error

// CheckSweep checks a sweep over an engine's slots (the parameter named
// slots) at 1 and 2 users: every configuration started (its start-up and
// first token recorded) and ran; with one slot the median wait at 2 users
// is at least queuedShare of an answer longer than at 1 (the second user
// queues), with more it is less (it does not). read reads each
// configuration's records.
func CheckSweep(f *sweep.File, slots string, read EachRecord) []SweepRow {
	var rows []SweepRow
	for _, c := range f.Configs {
		r := SweepRow{Config: c.Name}
		r.Slots, _ = strconv.Atoi(c.Params[slots])
		r.Problem = sweepProblem(c, &r, read)
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		rows = append(rows, SweepRow{Problem: "sweep.json has no configuration"})
	}
	return rows
}

func sweepProblem(c sweep.Config, r *SweepRow, read EachRecord) string {
	switch {
	case c.Error != nil:
		return "failed: " + *c.Error
	case r.Slots < 1:
		return "no slot count among its parameters"
	case c.Startup == nil || c.Startup.ReadyS == nil || c.Startup.FirstTokenS == nil || *c.Startup.FirstTokenS <= 0:
		return "no start-up recorded"
	}
	r.ReadyS, r.FirstTokenS = *c.Startup.ReadyS, *c.Startup.FirstTokenS
	wait, answer, prompt := map[int][]float64{}, map[int][]float64{}, map[int][]float64{}
	err := read(c.RunDir, func(rec *record.Record) {
		if rec.Phase != record.PhaseMeasured || rec.Error != nil || rec.FirstTokenNS == 0 || rec.Server == nil || rec.Server.PromptEvalDuration <= 0 {
			return
		}
		n := rec.Load.Concurrency
		ttft := float64(rec.FirstTokenNS - rec.SentNS)
		wait[n] = append(wait[n], ttft-float64(rec.Server.PromptEvalDuration))
		answer[n] = append(answer[n], float64(rec.EndNS-rec.FirstTokenNS))
		prompt[n] = append(prompt[n], float64(rec.Server.PromptEvalDuration))
	})
	if err != nil {
		return "its records: " + err.Error()
	}
	if len(wait[1]) == 0 || len(wait[2]) == 0 || median(answer[2]) <= 0 {
		return "no request at 1 and at 2 users with the server's prompt evaluation time"
	}
	r.Queued = (median(wait[2]) - median(wait[1]) - median(prompt[2])) / median(answer[2])
	switch {
	case r.Slots == 1 && r.Queued < queuedShare:
		return fmt.Sprintf("one slot: the median wait at 2 users, beyond one prompt's evaluation, is %.2f of an answer longer than at 1, want ≥ %.1f (the second user queues)", r.Queued, queuedShare)
	case r.Slots > 1 && r.Queued >= queuedShare:
		return fmt.Sprintf("%d slots: the median wait at 2 users, beyond one prompt's evaluation, is %.2f of an answer longer than at 1, want < %.1f (both are served at once)", r.Slots, r.Queued, queuedShare)
	}
	return ""
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, 0.5)
}
