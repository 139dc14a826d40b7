package metrics

import (
	"fmt"

	"github.com/servebench/servebench/internal/record"
)

// SummarySchema names the summary format (docs/OUTPUT.md).
const SummarySchema = "servebench.summary/v1"

// Thresholds above which the load generator itself may have shaped the
// result. One core is what a single dispatcher can use; a lag of a few
// milliseconds behind the schedule already distorts sub-second TTFTs.
const (
	clientCPUWarnPercent = 80
	clientLagWarnMS      = 5
)

// Below these the client's figures are noise, not evidence. Process CPU
// time advances in scheduler ticks (1 to 10 ms), so over a window of a few
// milliseconds one tick reads as hundreds of percent; over a second it is
// at most 1% of a core. A p99 of fewer than 100 dispatch lags is their
// maximum: one late send, not the client's pace (stats.MinSamples).
const (
	minClientCPUWindowS = 1.0
	minClientLagSamples = 100
)

// Summary is the content of summary.json: the run's context and one entry
// per load point.
type Summary struct {
	Schema   string         `json:"schema"`
	Run      *record.Run    `json:"run,omitempty"`
	Points   []PointSummary `json:"points"`
	Warnings []string       `json:"warnings"`
}

// Summarize builds the summary of the records folded into a, with the run's
// context when known (run may be nil: records alone are enough).
func Summarize(run *record.Run, a *Aggregator) *Summary {
	s := &Summary{Schema: SummarySchema, Run: run, Points: a.Points(), Warnings: []string{}}
	if run == nil {
		return s
	}
	for i := range s.Points {
		p := &s.Points[i]
		for _, pc := range run.Points {
			if pc.Index == p.Index {
				c := pc.Client
				p.Client = &c
				p.Warnings = append(p.Warnings, clientWarnings(c, run.ClientCPUs)...)
				p.Warnings = append(p.Warnings, p.dropped(c)...)
			}
		}
	}
	if run.Interrupted {
		s.Warnings = append(s.Warnings, "the run was interrupted: the last load point is incomplete and later points did not run")
	}
	return s
}

// clientWarnings judges the load generator's figures of a point, when it
// ran long enough and sent enough for them to mean something; cpus is
// the CPU count the run recorded for the machine that ran it (0 when a
// run.json predates it: judged against one core).
func clientWarnings(c record.ClientStats, cpus int) []string {
	var w []string
	if c.CPUPercent > clientCPUWarnPercent*float64(max(cpus, 1)) && c.WallSeconds() >= minClientCPUWindowS {
		on := fmt.Sprintf("on %d cores", cpus)
		if cpus == 0 {
			on = "on a machine whose core count the run did not record"
		}
		w = append(w, fmt.Sprintf("the client used %.0f%% CPU (of one core) %s: it may have limited the load", c.CPUPercent, on))
	}
	if c.LagP99MS > clientLagWarnMS && c.Sent >= minClientLagSamples {
		w = append(w, fmt.Sprintf("the client sent requests up to %.1f ms (p99) behind schedule: the offered load is lower than asked", c.LagP99MS))
	}
	return w
}

// AllFailed reports whether the run measured requests and every one of
// them failed (at every point): the run measured nothing about the server.
func (s *Summary) AllFailed() bool {
	if len(s.Points) == 0 {
		return false
	}
	for i := range s.Points {
		if !s.Points[i].AllFailed {
			return false
		}
	}
	return true
}

// dropped judges an open loop's arrivals that the concurrency cap kept
// from being sent: the server held every place until the point ended.
func (p *PointSummary) dropped(c record.ClientStats) []string {
	if c.Dropped == 0 {
		return nil
	}
	arrivals := c.Sent + c.Dropped
	if float64(c.Dropped) > (1-heldFraction)*float64(arrivals) {
		p.LoadHeld = false
	}
	return []string{fmt.Sprintf("%d of %d arrivals (%.0f%%) were dropped, not sent late: the server held all %d places of --max-concurrency until the point ended, so it served %.3g req/s of the %.3g offered",
		c.Dropped, arrivals, 100*float64(c.Dropped)/float64(arrivals), p.Load.MaxConcurrency, p.RequestRate, p.Load.Rate)}
}
