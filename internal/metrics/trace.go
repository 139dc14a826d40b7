package metrics

import (
	"math"
	"slices"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Trace is a replayed trace's point as achieved, to set beside the shape
// the trace itself has (run.json's trace; docs/METRICS.md, "Trace
// replay").
type Trace struct {
	// Sent counts the requests sent in each bin of the trace's bin_s, from
	// the point's first scheduled arrival: the trace's arrivals as they
	// left the client.
	Sent []int `json:"sent"`
	// ScheduleErrorMS is sent − scheduled of every request sent (warm-up
	// included): how late the client sent the trace's requests, the wait
	// for a place under --max-concurrency included.
	ScheduleErrorMS stats.Dist `json:"schedule_error_ms"`
	// Replayed is the share of the trace's requests that were sent; the
	// rest were dropped under --max-concurrency or never reached
	// (an interrupt).
	Replayed float64 `json:"replayed"`
	// Scale is how many times faster than the run's replay (--trace-speed)
	// this point replayed the trace: a capacity search's probe or a target
	// load above the trace's rate. Absent for the replay itself (1); Sent
	// is then binned per bin_s ÷ Scale, the trace's bins as this point
	// replayed them.
	Scale float64 `json:"scale,omitempty"`
}

// Factor is t's Scale, 1 when absent (or t nil).
func (t *Trace) Factor() float64 {
	if t == nil || t.Scale == 0 {
		return 1
	}
	return t.Scale
}

// traceAgg gathers a point's trace requests.
type traceAgg struct {
	sent  []int64 // SentNS of each request, model time
	first int64   // the earliest ScheduledNS: the point's start
	err   stats.Sample
}

func (t *traceAgg) add(r *record.Record) {
	if len(t.sent) == 0 || r.ScheduledNS < t.first {
		t.first = r.ScheduledNS
	}
	t.sent = append(t.sent, r.SentNS)
	t.err.Add(float64(r.SentNS-r.ScheduledNS) / 1e6)
}

// summary bins the sends as the trace's shape bins its arrivals, as a
// point replaying the trace scale times faster saw them.
func (t *traceAgg) summary(shape *record.Trace, scale float64) *Trace {
	out := &Trace{ScheduleErrorMS: t.err.Summary(), Sent: make([]int, len(shape.Arrivals))}
	if math.Abs(scale-1) > 1e-9 {
		out.Scale = scale
	}
	width := int64(math.Round(shape.BinS / scale * 1e9))
	for _, ns := range t.sent {
		k := int((ns - t.first) / max(width, 1))
		if k >= len(out.Sent) {
			// sent after the last bin (late): widen the histogram
			out.Sent = append(out.Sent, make([]int, k+1-len(out.Sent))...)
		}
		out.Sent[max(k, 0)]++
	}
	if shape.Requests > 0 {
		out.Replayed = float64(len(t.sent)) / float64(shape.Requests)
	}
	return out
}

// addTrace sets each point's Trace from its records, when the run
// replayed a trace.
func (s *Summary) addTrace(a *Aggregator) {
	if s.Run == nil || s.Run.Trace == nil {
		return
	}
	for i := range s.Points {
		p := &s.Points[i]
		if t := a.traces[p.Index]; t != nil {
			p.Trace = t.summary(s.Run.Trace, s.Run.Trace.Scale(p.Load.Rate))
		}
	}
}

// TraceArrivalsPerSecond is the trace's arrivals and the achieved sends
// as rates per second of each bin, for a renderer, the trace's as the
// point replayed it (its Scale); the two slices have the same length.
func TraceArrivalsPerSecond(shape *record.Trace, t *Trace) (trace, sent []float64) {
	bin := shape.BinS / t.Factor()
	n := len(shape.Arrivals)
	if t != nil {
		n = max(n, len(t.Sent))
	}
	trace, sent = make([]float64, n), make([]float64, n)
	for i := range n {
		if i < len(shape.Arrivals) {
			trace[i] = float64(shape.Arrivals[i]) / bin
		}
		if t != nil && i < len(t.Sent) {
			sent[i] = float64(t.Sent[i]) / bin
		}
	}
	return slices.Clip(trace), slices.Clip(sent)
}
