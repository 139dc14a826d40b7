package enginecheck

import (
	"fmt"
	"strconv"

	"github.com/servebench/servebench/internal/sweep"
)

// Queueing bounds for a sweep over an engine's slots at 1 and 2 users.
// With one slot the second user waits for the first user's whole answer,
// so TTFT at 2 users is the solo TTFT plus, on average, half an answer:
// well over twice the solo TTFT when the answer is long against the
// prompt (64 output tokens against 128 prompt tokens here). With two
// slots both are served at once and TTFT grows only by the other
// sequence's share of each step. 1.7 sits between the two.
const queuedTTFTRatio = 1.7

// SweepRow is one configuration of a slot sweep, as checked.
type SweepRow struct {
	Config string
	Slots  int
	// ReadyS and FirstTokenS are its start-up; Ratio its TTFT p50 at 2
	// users over that at 1.
	ReadyS, FirstTokenS, Ratio float64
	Problem                    string
}

// CheckSweep checks a sweep over an engine's slots (the parameter named
// slots) at 1 and 2 users: every configuration started (its start-up and
// first token recorded) and ran; with one slot TTFT at 2 users is at least
// queuedTTFTRatio times TTFT at 1 (the second user queues), with more it
// is less (it does not).
func CheckSweep(f *sweep.File, slots string) []SweepRow {
	var rows []SweepRow
	for _, c := range f.Configs {
		r := SweepRow{Config: c.Name}
		r.Slots, _ = strconv.Atoi(c.Params[slots])
		r.Problem = sweepProblem(c, &r)
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		rows = append(rows, SweepRow{Problem: "sweep.json has no configuration"})
	}
	return rows
}

func sweepProblem(c sweep.Config, r *SweepRow) string {
	switch {
	case c.Error != nil:
		return "failed: " + *c.Error
	case r.Slots < 1:
		return "no slot count among its parameters"
	case c.Startup == nil || c.Startup.ReadyS == nil || c.Startup.FirstTokenS == nil || *c.Startup.FirstTokenS <= 0:
		return "no start-up recorded"
	}
	r.ReadyS, r.FirstTokenS = *c.Startup.ReadyS, *c.Startup.FirstTokenS
	ttft := map[int]float64{}
	for _, p := range c.Points {
		if p.TTFTP50 != nil && p.ErrorRate == 0 {
			ttft[p.Load.Concurrency] = *p.TTFTP50
		}
	}
	if ttft[1] <= 0 || ttft[2] <= 0 {
		return "no TTFT p50 at 1 and at 2 users without errors"
	}
	r.Ratio = ttft[2] / ttft[1]
	switch {
	case r.Slots == 1 && r.Ratio < queuedTTFTRatio:
		return fmt.Sprintf("one slot: TTFT at 2 users is %.2f× that at 1, want ≥ %.1f× (the second user queues)", r.Ratio, queuedTTFTRatio)
	case r.Slots > 1 && r.Ratio >= queuedTTFTRatio:
		return fmt.Sprintf("%d slots: TTFT at 2 users is %.2f× that at 1, want < %.1f× (both are served at once)", r.Slots, r.Ratio, queuedTTFTRatio)
	}
	return ""
}
