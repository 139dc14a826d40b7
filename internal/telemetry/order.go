package telemetry

import (
	"cmp"
	"container/heap"
	"slices"
)

// Scan calls fn with each sample of a run, in some order, and returns the
// error that stopped it, if any: a run's samples read from telemetry.jsonl
// (ScanSamples) or from a sampler (Sampler.Written), one at a time, so
// that no reader holds them all.
type Scan func(fn func(*Sample)) error

// reorderMoments is how many distinct moments InTimeOrder holds back. A
// source's reading is stamped with the tick that began it and written
// when it ends, within an interval (its deadline), so that the file is in
// time order but for a tick or two; every source stamping at ticks, 64
// moments are a minute of samples at the default interval, a few hundred
// samples in memory.
const reorderMoments = 64

// InTimeOrder is scan's samples, then the events extra (in any order: the
// events a run's records stand for, RecordEvent), in time order: samples
// of one moment in the order scanned, the extra events after them. The
// extra events come only with at least one sample: a run that sampled
// nothing (no telemetry.jsonl, --no-telemetry) has no telemetry. A
// sample is held back until reorderMoments later moments have been seen;
// one that comes later than that (a source that overran its deadline by a
// minute) is placed where it came, as the summaries then take it.
func InTimeOrder(scan Scan, extra []Sample) Scan {
	return func(fn func(*Sample)) error {
		o := &reorder{out: fn, moments: map[int64]int{}, extra: slices.Clone(extra)}
		slices.SortStableFunc(o.extra, func(a, b Sample) int { return cmp.Compare(a.TNS, b.TNS) })
		err := scan(o.add)
		if o.seq == 0 {
			return err
		}
		for len(o.held) > 0 {
			o.release()
		}
		for i := range o.extra {
			fn(&o.extra[i])
		}
		return err
	}
}

// reorder is InTimeOrder's buffer: a heap of the samples held back, by
// time then by arrival.
type reorder struct {
	out     func(*Sample)
	held    heldSamples
	moments map[int64]int // samples held per moment
	seq     int
	extra   []Sample // not yet given, in time order
}

func (o *reorder) add(s *Sample) {
	heap.Push(&o.held, heldSample{s: *s, seq: o.seq})
	o.seq++
	o.moments[s.TNS]++
	for len(o.moments) > reorderMoments {
		o.release()
	}
}

// release gives every held sample of the earliest moment held, after the
// extra events before it.
func (o *reorder) release() {
	t := o.held[0].s.TNS
	for len(o.extra) > 0 && o.extra[0].TNS < t {
		o.out(&o.extra[0])
		o.extra = o.extra[1:]
	}
	for len(o.held) > 0 && o.held[0].s.TNS == t {
		h := heap.Pop(&o.held).(heldSample)
		o.out(&h.s)
	}
	delete(o.moments, t)
}

type heldSample struct {
	s   Sample
	seq int
}

type heldSamples []heldSample

func (h heldSamples) Len() int { return len(h) }
func (h heldSamples) Less(i, j int) bool {
	return cmp.Or(cmp.Compare(h[i].s.TNS, h[j].s.TNS), cmp.Compare(h[i].seq, h[j].seq)) < 0
}
func (h heldSamples) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heldSamples) Push(x any)   { *h = append(*h, x.(heldSample)) }
func (h *heldSamples) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// SliceScan scans samples held in memory, in their order.
func SliceScan(samples []Sample) Scan {
	return func(fn func(*Sample)) error {
		for i := range samples {
			fn(&samples[i])
		}
		return nil
	}
}

// Observed is scan with observe seeing each sample before fn does.
func (scan Scan) Observed(observe func(*Sample)) Scan {
	return func(fn func(*Sample)) error {
		return scan(func(s *Sample) { observe(s); fn(s) })
	}
}
