package metrics

import (
	"cmp"
	"container/heap"
	"slices"
	"time"
)

// Requests in flight, swept as records come. The largest number in flight
// and the time at least heldFraction of a closed loop's users were in
// flight need every request's interval in time order. Records come in the
// order requests ended (a run's sink, or its records file read back), so an
// instant far enough behind the latest end can no longer gain a request:
// edges before it are swept and their intervals let go. Only the last
// sweepLookback of intervals is kept: memory bounded by the load, not by
// the length of the point.

// sweepLookback is how far behind the latest end an instant is taken as
// complete: longer than the default request timeout (10 minutes), or
// twice the longest request seen when that is longer. A request sent
// before an instant already swept is counted, and the point warns that its
// concurrency figures are approximate (sweeper.late).
const sweepLookback = 15 * time.Minute

// sweepEvery is how many intervals are added between sweeps.
const sweepEvery = 4096

// sweeper sweeps one closed-loop point's intervals.
type sweeper struct {
	thr     int // in flight that counts as holding the load
	pending []pend
	added   int
	maxEnd  int64
	longest int64
	swept   int64 // edges before swept are done
	started bool
	open    int // in flight at swept
	max     int
	held    int64
	late    bool // a request was sent before swept
	// first round: the c earliest sends (a max-heap on start) and their
	// ends; lastStart is the latest send.
	round     roundHeap
	users     int
	lastStart int64
	// settled, when the run says so (Aggregator.Settled), is an instant
	// before which no request still to come was sent.
	settled *int64
	// apart: fed by Aggregator.Sweep, not as records are added.
	apart bool
}

type pend struct {
	start, end int64
	startDone  bool
}

func (s *sweeper) add(start, end int64) {
	if s.started && start < s.swept {
		s.late = true
	}
	s.pending = append(s.pending, pend{start: start, end: end})
	s.maxEnd = max(s.maxEnd, end)
	s.longest = max(s.longest, end-start)
	s.lastStart = max(s.lastStart, start)
	s.keepRound(start, end)
	if s.added++; s.added%sweepEvery == 0 {
		w := s.maxEnd - max(int64(sweepLookback), 2*s.longest)
		if s.settled != nil {
			w = max(w, *s.settled)
		}
		s.sweepTo(w)
	}
}

// sweepTo sweeps the edges before w and lets go of the intervals that
// ended before it.
func (s *sweeper) sweepTo(w int64) {
	if s.started && w <= s.swept {
		return
	}
	var edges []edge
	kept := s.pending[:0]
	for _, p := range s.pending {
		if !p.startDone && p.start < w {
			edges, p.startDone = append(edges, edge{p.start, +1}), true
		}
		if p.end < w {
			edges = append(edges, edge{p.end, -1})
			continue
		}
		kept = append(kept, p)
	}
	s.pending = kept
	s.run(edges)
}

// run sweeps edges from where the last sweep stopped, up to the last of
// them: the stretch after it is swept with the next edges.
func (s *sweeper) run(edges []edge) {
	sortEdges(edges)
	cursor, has := s.swept, s.started
	for _, e := range edges {
		if has && e.t > cursor {
			s.stretch(e.t-cursor, s.open)
		}
		cursor, has = e.t, true
		s.open += e.delta
	}
	s.swept, s.started = cursor, has
}

func (s *sweeper) stretch(d int64, open int) {
	s.max = max(s.max, open)
	if open >= s.thr {
		s.held += d
	}
}

// final returns the largest number in flight and the time held, sweeping
// what is left on a copy, so that more records may still come.
func (s *sweeper) final() (maxOpen int, held int64) {
	c := *s
	var edges []edge
	for _, p := range s.pending {
		if !p.startDone {
			edges = append(edges, edge{p.start, +1})
		}
		edges = append(edges, edge{p.end, -1})
	}
	c.run(edges)
	return c.max, c.held
}

// keepRound keeps the users' first sends: the users earliest starts.
func (s *sweeper) keepRound(start, end int64) {
	if s.users <= 0 {
		return
	}
	if len(s.round) < s.users {
		heap.Push(&s.round, pend{start: start, end: end})
		return
	}
	if start < s.round[0].start {
		s.round[0] = pend{start: start, end: end}
		heap.Fix(&s.round, 0)
	}
}

// firstRound is when the first round had all ended (pointAgg.firstRound).
func (s *sweeper) firstRound() int64 {
	var end int64
	for _, p := range s.round {
		end = max(end, p.end)
	}
	return end
}

type edge struct {
	t     int64
	delta int
}

// sortEdges orders edges by time, an end before a start at the same
// instant: an interval ending when another starts does not overlap it.
func sortEdges(e []edge) {
	slices.SortFunc(e, func(a, b edge) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.delta, b.delta)) })
}

// roundHeap is a max-heap of intervals on their start.
type roundHeap []pend

func (h roundHeap) Len() int           { return len(h) }
func (h roundHeap) Less(i, j int) bool { return h[i].start > h[j].start }
func (h roundHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *roundHeap) Push(x any)        { *h = append(*h, x.(pend)) }
func (h *roundHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
