package slo

import (
	"fmt"
	"slices"
	"sync"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
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
	for _, metric := range []string{metricTTFT, metricE2E} {
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
		// A wrong URL, model or protocol fails at any load: such failures
		// are no evidence of overload (the verdict calls them failing).
		if record.Kind(r.Error.Class) != record.KindFailing {
			o.failed++
		}
	} else if t, ok := metrics.TTFTSched(r); ok {
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
		return fmt.Sprintf("%d of %d requests failed with errors a load can cause (timeouts, 429, 5xx, out of memory)", o.failed, o.done)
	}
	if o.limitMS <= 0 || len(o.recent) < overloadWindow || len(o.first) < overloadWindow {
		return ""
	}
	low := slices.Min(o.recent)
	if low > o.limitMS && stats.Mean(o.recent) > stats.Mean(o.first) {
		return fmt.Sprintf("time to first token grew without bound (the last %d requests all waited over %s)", overloadWindow, formatDuration(o.limitMS, "s"))
	}
	return ""
}

// Queue growth. An open loop holds only if the server keeps up with the
// arrivals. A fixed number of requests bounds the queue an overloaded
// server builds, so percentiles alone can pass a load the server cannot
// sustain; the trend gives it away (on the simulator a steady point's
// trend stays within ±0.02 s/s, one offered 35% beyond capacity rises
// 0.16 s/s): when the TTFT measured from the
// schedule rises through a point at more than queueGrowthLimit (seconds
// per second of arrivals), by more than queueGrowthShare of the TTFT
// target (the E2E target without one; 1 s without either) over the
// point, the queue is growing without bound and the load fails as
// overloaded.
const (
	queueGrowthLimit       = 0.1
	queueGrowthShare       = 0.1
	queueGrowthMinRequests = 20
)

// queueGrowth returns why the level's queue grows without bound, or "".
func (lv *level) queueGrowth(idx []int, checks []SLO) string {
	ref := 1000.0
	if l := NewOverload(checks).limitMS; l > 0 {
		ref = l / overloadFactor
	}
	for _, i := range idx {
		q := &lv.runs[i].queue
		if q.N() < queueGrowthMinRequests {
			continue
		}
		slope := q.Slope() // ms per s
		rise := slope * q.SpanX()
		if slope > queueGrowthLimit*1000 && rise > queueGrowthShare*ref {
			return fmt.Sprintf("the server does not keep up: time to first token from the schedule rose %s per second of arrivals (%s over the point)",
				formatDuration(slope, "ms"), formatDuration(rise, "s"))
		}
	}
	return ""
}

// failingShare: a load where at least this share of the measured requests
// failed for reasons no load explains is failing, not overloaded.
const failingShare = 0.5

// failing says why a load's errors show a server failing at any load
// (record.KindFailing: connect, 4xx, unreadable answers), or "".
func failing(pt *metrics.PointSummary) string {
	n := pt.Requests.Completed + pt.Requests.Failed
	bad := map[string]int{}
	total := 0
	for c, k := range pt.Requests.Errors {
		if record.Kind(c) == record.KindFailing {
			bad[c] = k
			total += k
		}
	}
	if n == 0 || total == 0 || float64(total) < failingShare*float64(n) {
		return ""
	}
	return fmt.Sprintf("%d of %d requests failed (%s), which no load explains", total, n, metrics.ErrorCounts(bad))
}
