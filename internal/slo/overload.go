package slo

import (
	"fmt"
	"slices"
	"sync"

	"github.com/servebench/servebench/internal/record"
)

// Overload detection. A probe far beyond capacity would otherwise run to
// its end while the queue only grows; these thresholds mark a load as
// clearly failing long before any percentile could be close to passing.
const (
	// overloadMinRequests is how many measured requests must have ended
	// before the error share is judged.
	overloadMinRequests = 10
	// overloadErrorShare: more than half the requests failing.
	overloadErrorShare = 0.5
	// overloadWindow requests in a row whose TTFT (from the schedule)
	// exceeds overloadFactor × the TTFT target (or the E2E target) and is
	// still rising: a queue growing without bound.
	overloadWindow = 10
	overloadFactor = 10
)

// Overload watches one probe's records and says when the server is
// clearly overloaded. Add is safe for concurrent use.
type Overload struct {
	limitMS float64 // 0: TTFT is not judged
	mu      sync.Mutex
	done    int
	failed  int
	first   []float64 // the first overloadWindow TTFTs from schedule
	recent  []float64 // the last overloadWindow
	tripped bool
}

// NewOverload returns a detector for an objective's SLOs.
func NewOverload(checks []SLO) *Overload {
	o := &Overload{}
	for _, metric := range []string{"ttft", "e2e"} {
		for _, s := range checks {
			if s.Metric == metric {
				o.limitMS = max(o.limitMS, overloadFactor*s.Value)
			}
		}
		if o.limitMS > 0 {
			break
		}
	}
	return o
}

// Add folds in a record and returns, once, why the load is overloaded
// ("" while it is not).
func (o *Overload) Add(r *record.Record) string {
	if r.Phase == record.PhaseWarmup || (r.Error != nil && r.Error.Class == record.ClassCancelled) {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tripped {
		return ""
	}
	o.done++
	if r.Error != nil {
		o.failed++
	} else if r.FirstTokenNS != 0 {
		t := float64(r.FirstTokenNS-r.ScheduledNS) / 1e6
		if len(o.first) < overloadWindow {
			o.first = append(o.first, t)
		}
		o.recent = append(o.recent, t)
		if len(o.recent) > overloadWindow {
			o.recent = o.recent[1:]
		}
	}
	why := o.reason()
	o.tripped = why != ""
	return why
}

func (o *Overload) reason() string {
	if o.done >= overloadMinRequests && float64(o.failed) > overloadErrorShare*float64(o.done) {
		return fmt.Sprintf("%d of %d requests failed", o.failed, o.done)
	}
	if o.limitMS <= 0 || len(o.recent) < overloadWindow || len(o.first) < overloadWindow {
		return ""
	}
	low := slices.Min(o.recent)
	if low > o.limitMS && mean(o.recent) > mean(o.first) {
		return fmt.Sprintf("time to first token grew without bound (the last %d requests all waited over %s)", overloadWindow, formatDuration(o.limitMS, "s"))
	}
	return ""
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
