package metrics

import (
	"math"

	"github.com/servebench/servebench/internal/stats"
)

// Counting slices as records come. A slice's figures need each request's
// chunks only to know which slice each chunk arrived in, and that depends
// on the point's origin (its first send), known for certain only at the
// end. When a lower bound of the origin is known (Aggregator.From), the
// origin f lies in [lo, hi], hi being the earliest send seen so far, and
// an instant t falls in the same slice for every f in that range unless a
// slice boundary f+kw can reach it: (t−lo) mod w ≤ hi−lo. A request none
// of whose instants can be reached is counted at once and let go; the few
// others are kept, as without a bound, and counted at the end. Memory is
// then bounded by the number of slices, not of requests or tokens.

// sliceAcc is what one slice has gathered from the requests counted at
// once. Busy time is linear in the origin: busyConst + busyCoef×(f−lo).
type sliceAcc struct {
	completed, errors, tokens int
	busyConst, busyCoef       int64
	ttft, dec                 stats.Sample
}

// sliceStream counts the requests of one point that need not be kept.
type sliceStream struct {
	lo   int64 // no measured request was sent before lo
	w    int64
	accs []sliceAcc
	// broken: a request was sent before lo, so the bound was wrong; the
	// rest are kept and the slices say so (Warnings).
	broken bool
	// settled, when the run says so (Aggregator.Settled), is an instant
	// no request still to come was sent before: once it passes the
	// earliest send seen, that send is the origin (narrow).
	settled *int64
}

// narrow raises the origin's lower bound to lo, which no measured request
// was sent before either: the busy time counted so far is re-expressed
// from it. A run's first send comes a second or more after its start
// (the tokenizer's setup, connections), and with so wide a range a
// request near every slice boundary would be kept to the end.
func (s *sliceStream) narrow(lo int64) {
	for k := range s.accs {
		s.accs[k].busyConst += s.accs[k].busyCoef * (lo - s.lo)
	}
	s.lo = lo
}

// fixed reports whether instant t falls in the same slice for every origin
// in [s.lo, hi].
func (s *sliceStream) fixed(t, hi int64) bool {
	d := hi - s.lo
	if d == 0 {
		return true
	}
	return d < s.w && (t-s.lo)%s.w > d
}

// acc is slice k's accumulator, grown as needed.
func (s *sliceStream) acc(k int) *sliceAcc {
	for len(s.accs) <= k {
		s.accs = append(s.accs, sliceAcc{ttft: sliceSample(), dec: sliceSample()})
	}
	return &s.accs[k]
}

// take counts q at once when none of its instants depends on the origin
// (hi is the earliest send so far) and reports whether it did.
func (s *sliceStream) take(q *sliceReq, hi int64) bool {
	if s.broken {
		return false
	}
	if q.sent < s.lo {
		s.broken = true
		return false
	}
	if s.settled != nil && *s.settled != 0 && *s.settled >= hi && hi > s.lo { // 0: never told
		s.narrow(hi)
	}
	if !s.fixed(q.sent, hi) || !s.fixed(q.end, hi) || (q.ok && !math.IsNaN(q.ttft) && !s.fixed(q.first, hi)) {
		return false
	}
	for _, at := range q.at {
		if !s.fixed(q.sent+at, hi) {
			return false
		}
	}
	idx := func(t int64) int { return int((t - hi) / s.w) }
	s.busy(q.sent, q.end, idx(q.sent), idx(q.end))
	k := idx(q.end)
	if !q.ok {
		s.acc(k).errors++
		return true
	}
	s.acc(k).completed++
	counted := 0
	for i, at := range q.at {
		n := q.chunkTokens(i)
		s.acc(idx(q.sent + at)).tokens += n
		counted += n
	}
	s.acc(k).tokens += q.tokens - counted
	if !math.IsNaN(q.ttft) {
		s.acc(idx(q.first)).ttft.Add(q.ttft)
	}
	s.acc(k).dec.Add(q.decode)
	return true
}

// busy adds the time [start, end] spent in flight to slices kS..kE, the
// parts cut by a slice boundary as a function of the origin.
func (s *sliceStream) busy(start, end int64, kS, kE int) {
	if kS == kE {
		s.acc(kS).busyConst += end - start
		return
	}
	a := s.acc(kS)
	a.busyConst += s.lo + int64(kS+1)*s.w - start
	a.busyCoef++
	for k := kS + 1; k < kE; k++ {
		s.acc(k).busyConst += s.w
	}
	b := s.acc(kE)
	b.busyConst += end - s.lo - int64(kE)*s.w
	b.busyCoef--
}

// into adds what was counted at once to the slicer of origin f.
func (s *sliceStream) into(sl *slicer, f int64) {
	for k := range s.accs {
		a := &s.accs[k]
		j := min(k, len(sl.out)-1) // the window's last instant belongs to the last slice
		o := &sl.out[j]
		o.Completed += a.completed
		o.Errors += a.errors
		o.OutputTokens += a.tokens
		sl.busy[j] += a.busyConst + a.busyCoef*(f-s.lo)
		sl.ttft[j].Merge(&a.ttft)
		sl.dec[j].Merge(&a.dec)
	}
}

// sliceExact is the most TTFTs or decode speeds a slice keeps one by one;
// past it, its quantiles are within stats.SketchError. A day of one-minute
// slices then keeps a few kilobytes a slice, not 16 bytes a request.
const sliceExact = 2048

func sliceSample() stats.Sample { return stats.Sample{ExactLimit: sliceExact} }
