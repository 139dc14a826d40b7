package telemetry

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
)

// Summarize is the telemetry of one window (a load point's measured
// span, or a slice of it): each kind's summary, the events in the window
// by kind, and the GPUs' energy per output token when the energy and the
// tokens (outputTokens, generated in the window) are both known. It is
// nil when the window holds nothing at all.
func Summarize(w Window, outputTokens float64) *Point {
	p := &Point{
		Server: summarizeServer(w),
		GPUs:   summarizeGPUs(w),
		Host:   summarizeHost(w),
		Client: summarizeClient(w),
		Events: countEvents(w),
	}
	if e, ok := totalEnergy(p.GPUs); ok && outputTokens > 0 {
		v := e / outputTokens
		p.EnergyJPerOutputToken = &v
	}
	if p.Server == nil && p.GPUs == nil && p.Host == nil && p.Client == nil && p.Events == nil {
		return nil
	}
	return p
}

// countEvents counts the events in the window by kind; nil when none.
func countEvents(w Window) map[string]int {
	var n map[string]int
	for _, s := range w.Samples {
		if s.Event == nil || s.TNS < w.From || s.TNS > w.To {
			continue
		}
		if n == nil {
			n = map[string]int{}
		}
		n[s.Event.Kind]++
	}
	return n
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
// with when (s of
// model time since the start: the run clock times scale) and the first
// detail. Nil when nothing happened.
func EventLines(samples []Sample, scale float64) []string {
	byKind := map[string][]Sample{}
	for _, s := range samples {
		if s.Event != nil {
			byKind[s.Event.Kind] = append(byKind[s.Event.Kind], s)
		}
	}
	var lines []string
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		lines = append(lines, eventLine(kind, byKind[kind], scale))
	}
	return lines
}

func eventLine(kind string, evs []Sample, scale float64) string {
	times := make([]string, 0, maxEventTimes)
	for _, e := range evs[:min(len(evs), maxEventTimes)] {
		times = append(times, at(e.TNS, scale))
	}
	more := ""
	if len(evs) > maxEventTimes {
		more = fmt.Sprintf(" and %d more", len(evs)-maxEventTimes)
	}
	first := evs[0].Event
	what := cmp.Or(first.Source, evs[0].Instance)
	if first.Detail != "" {
		what += ": " + first.Detail
	}
	return fmt.Sprintf("telemetry: %d %s event%s at %s%s (first: %s)", len(evs), kind, plural(len(evs), "", "s"), strings.Join(times, ", "), more, what)
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
