package telemetry

import (
	"cmp"
	"fmt"

	"github.com/servebench/servebench/internal/record"
)

// Summarize is the telemetry of one window (a load point's measured
// span, or a slice of it): each kind's summary, the events in the window
// by kind, and the GPUs' energy per output token when the energy and the
// tokens (outputTokens, generated in the window) are both known. It is
// nil when the window holds nothing at all. w.Samples are in time order;
// Summaries summarises many windows in one pass.
func Summarize(w Window, outputTokens float64) *Point {
	s := NewSummaries(w.Scale, [2]int64{w.From, w.To})
	for i := range w.Samples {
		s.Add(&w.Samples[i])
	}
	return s.Point(0, outputTokens)
}

// totalEnergy is the energy every GPU used over the window, known only
// when each GPU's is: a sum over some of them would understate it.
func totalEnergy(gpus []GPUPoint) (float64, bool) {
	if len(gpus) == 0 {
		return 0, false
	}
	var sum float64
	for _, g := range gpus {
		if g.EnergyJ == nil {
			return 0, false
		}
		sum += *g.EnergyJ
	}
	return sum, true
}

// RecordInstance is the Instance of events read from the records.
const RecordInstance = "records"

// RecordEvent is the event a record stands for on the timeline, if any:
// a request the server failed for want of memory is an oom event at the
// moment it ended, with the server's words.
func RecordEvent(r *record.Record) (Sample, bool) {
	if r.Error == nil || r.Error.Class != record.ClassOOM {
		return Sample{}, false
	}
	return Sample{TNS: r.EndNS, Source: KindEvent, Instance: RecordInstance,
		Event: &Event{Kind: EventOOM, Source: RecordInstance, Detail: oneLine(r.Error.Message)}}, true
}

// maxEventTimes is how many moments an event line names per kind; the
// rest are counted, and telemetry.jsonl has them all.
const maxEventTimes = 5

// EventLines says what happened during the run, a line per kind of event,
// with when (s of model time since the start: the run clock times scale)
// and the first detail. Nil when nothing happened. samples are in time
// order; Summaries.EventLines says the same in one pass.
func EventLines(samples []Sample, scale float64) []string {
	s := NewSummaries(scale)
	for i := range samples {
		s.Add(&samples[i])
	}
	return s.EventLines()
}

// at is a moment of the run clock as seconds of model time.
func at(ns int64, scale float64) string {
	return fmt.Sprintf("%.1f s", seconds(ns)*cmp.Or(scale, 1))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PeakKVCache is the server's highest KV-cache use over the window (a
// fraction, summed replicas averaged); nil when not known.
func (p *Point) PeakKVCache() *float64 {
	if p == nil || p.Server == nil || p.Server.KVCacheUsage == nil {
		return nil
	}
	return &p.Server.KVCacheUsage.Max
}

// PeakVRAMBytes is the highest memory use of any one GPU over the window:
// what a plan's per-device memory is compared with. Nil when no GPU
// reported its memory.
func (p *Point) PeakVRAMBytes() *float64 {
	if p == nil {
		return nil
	}
	var peak *float64
	for _, g := range p.GPUs {
		if m := g.MemoryUsedBytesMax; m != nil && (peak == nil || *m > *peak) {
			peak = m
		}
	}
	return peak
}
