package metrics

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/record"
)

// SummarySchema names the summary format (docs/OUTPUT.md).
const SummarySchema = "servebench.summary/v1"

// Thresholds above which the load generator is near saturation and may
// have shaped the result, as issue 9 defines it: CPU above 90% of the cores
// it could use, or a dispatch lag p99 above 10 ms. Below 90% the Go
// scheduler still finds a core for the dispatcher within a tick; the
// simulator's open loops on a busy two-core machine measure a lag p99
// near 1 ms at 30% CPU, so 10 ms is well clear of that noise while still
// within 1% of a one-second TTFT objective. (The lag is the client's wall
// time; a sped-up simulator's figures are in model time.)
const (
	clientCPUWarnFraction = 0.90
	clientLagWarnMS       = 10
)

// ClientLimitedPrefix begins the run warning that the client was near
// saturation at some point; renderers print it in the summary's first
// lines, since it qualifies every figure after it.
const ClientLimitedPrefix = "the client was near saturation"

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
	defer s.qualify()
	if run == nil {
		return s
	}
	for i := range s.Points {
		p := &s.Points[i]
		for _, pc := range run.Points {
			// a point rebuilt from its records (record.Reader.Complete)
			// has no client figures
			if pc.Index == p.Index && pc.Client != (record.ClientStats{}) {
				c := pc.Client
				p.Client = &c
				p.Warnings = append(p.Warnings, clientWarnings(c, run.ClientCPUs)...)
				p.Warnings = append(p.Warnings, p.dropped(c)...)
			}
		}
	}
	// First: it qualifies every figure after it.
	if w := clientLimited(s.Points, run.ClientCPUs); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	if run.Shard != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("worker %d of %d of a sharded run: these figures cover its share of the load alone; merge the workers' run directories with servebench report DIR0 DIR1 ...",
			run.Shard.Index, run.Shard.Count))
	}
	if run.Interrupted {
		s.Warnings = append(s.Warnings, "the run was interrupted: the last load point is incomplete and later points did not run")
	}
	if run.Stopped != "" {
		s.Warnings = append(s.Warnings, "the run stopped before its load was done: "+run.Stopped)
	}
	s.warnSimBehind() // from run.json's readings; again with telemetry
	s.addTrace(a)
	return s
}

// clientWarnings judges the load generator's figures of a point, when it
// ran long enough and sent enough for them to mean something; cpus is
// the CPU count the run recorded for the machine that ran it (0 when a
// run.json predates it: judged against one core).
func clientWarnings(c record.ClientStats, cpus int) []string {
	var w []string
	busy, late := clientSaturated(c, cpus)
	if busy {
		w = append(w, fmt.Sprintf("the client used %.0f%% CPU (of one core) %s: it may have limited the load", c.CPUPercent, onCores(cpus)))
	}
	if late {
		w = append(w, fmt.Sprintf("the client sent requests up to %.1f ms (p99) behind schedule: the offered load is lower than asked", c.LagP99MS))
	}
	return w
}

// clientSaturated says whether the client's CPU or its dispatch lag
// crossed the saturation thresholds over a point.
func clientSaturated(c record.ClientStats, cpus int) (busy, late bool) {
	busy = c.CPUPercent > 100*clientCPUWarnFraction*float64(max(cpus, 1)) && c.WallSeconds() >= minClientCPUWindowS
	late = c.LagP99MS > clientLagWarnMS && c.Sent >= minClientLagSamples
	return busy, late
}

func onCores(cpus int) string {
	if cpus == 0 {
		return "on a machine whose core count the run did not record"
	}
	if cpus == 1 {
		return "on 1 core"
	}
	return fmt.Sprintf("on %d cores", cpus)
}

// clientLimited is the run's one-line statement of the points where the
// client was near saturation, or "" when it never was.
func clientLimited(points []PointSummary, cpus int) string {
	var at []string
	for i := range points {
		p := &points[i]
		if p.Client == nil {
			continue
		}
		busy, late := clientSaturated(*p.Client, cpus)
		var why []string
		if busy {
			why = append(why, fmt.Sprintf("CPU %.0f%% of one core %s", p.Client.CPUPercent, onCores(cpus)))
		}
		if late {
			why = append(why, fmt.Sprintf("dispatch lag p99 %.1f ms", p.Client.LagP99MS))
		}
		if len(why) > 0 {
			at = append(at, fmt.Sprintf("%s (%s)", p.Load.Label(), strings.Join(why, ", ")))
		}
	}
	if len(at) == 0 {
		return ""
	}
	return fmt.Sprintf("%s at %s: the figures there may be limited by the client, not the server (thresholds: CPU above %.0f%% of its cores, dispatch lag p99 above %d ms)",
		ClientLimitedPrefix, strings.Join(at, "; "), 100*clientCPUWarnFraction, clientLagWarnMS)
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
