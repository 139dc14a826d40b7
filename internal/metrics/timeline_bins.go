package metrics

import (
	"slices"

	"github.com/servebench/servebench/internal/stats"
)

// A long run's timeline. Up to timelineExact requests, Curves keeps each
// one and cuts the timeline into bins of any width at the end. Past that,
// requests are folded as they come into fine bins of the run's clock:
// width a power of two of milliseconds from the run's epoch, doubled
// whenever more than fineBins would be needed, so memory stays bounded
// however long the run. Sums are integers (ns, 1/2^16 of a token), so that
// the bins do not depend on the order records come in, and the page a run
// writes equals the one report builds from its records file. The page's
// bins are then whole numbers of fine bins, at most the bins asked for.
const (
	timelineExact = stats.ExactMax // 40 bytes a request until then
	fineBins      = 1 << 13
	fineWidth0    = int64(1e6) // 1 ms
	tokenUnit     = 1 << 16
)

type fineBin struct {
	tokens, busy, errs int64
}

type fineTimeline struct {
	g     int64 // bin k covers [k×g, (k+1)×g) ns since the epoch
	bins  map[int64]*fineBin
	spans map[int32]*[2]int64 // each point's first send and last end
}

func newFineTimeline(reqs []reqSpan) *fineTimeline {
	f := &fineTimeline{g: fineWidth0, bins: map[int64]*fineBin{}, spans: map[int32]*[2]int64{}}
	for _, r := range reqs {
		f.add(r)
	}
	return f
}

func (f *fineTimeline) bin(k int64) *fineBin {
	b := f.bins[k]
	if b == nil {
		b = &fineBin{}
		f.bins[k] = b
	}
	return b
}

func (f *fineTimeline) add(r reqSpan) {
	if s := f.spans[r.point]; s == nil {
		f.spans[r.point] = &[2]int64{r.sent, r.end}
	} else {
		s[0], s[1] = min(s[0], r.sent), max(s[1], r.end)
	}
	f.spread(r.sent, r.end, func(b *fineBin, k int64) { b.busy += min((k+1)*f.g, r.end) - max(k*f.g, r.sent) })
	if r.failed {
		f.bin(floorDiv(r.end, f.g)).errs++
	} else if r.first > 0 && r.end > r.first {
		// Each bin takes the tokens due by its end less those due by its
		// start, so that two bins take what their union would, whatever
		// the width when the request came.
		total := int64(r.out) * tokenUnit
		due := func(t int64) int64 {
			if t >= r.end {
				return total
			}
			return int64(float64(total) * float64(t-r.first) / float64(r.end-r.first))
		}
		f.spread(r.first, r.end, func(b *fineBin, k int64) {
			lo, hi := max(k*f.g, r.first), min((k+1)*f.g, r.end)
			b.tokens += due(hi) - due(lo)
		})
	} else {
		f.bin(floorDiv(r.end, f.g)).tokens += int64(r.out) * tokenUnit
	}
	for len(f.bins) > fineBins {
		f.coarsen()
	}
}

// spread calls add with each bin k that [t0, t1) overlaps.
func (f *fineTimeline) spread(t0, t1 int64, add func(b *fineBin, k int64)) {
	for k := floorDiv(t0, f.g); k*f.g < t1; k++ {
		add(f.bin(k), k)
	}
}

// coarsen doubles the bins' width.
func (f *fineTimeline) coarsen() {
	old := f.bins
	f.g *= 2
	f.bins = make(map[int64]*fineBin, len(old)/2+1)
	for k, b := range old {
		n := f.bin(floorDiv(k, 2))
		n.tokens, n.busy, n.errs = n.tokens+b.tokens, n.busy+b.busy, n.errs+b.errs
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// timeline fills tl's request series from the fine bins over [from, to]
// (requests and telemetry) in at most bins bins, and returns the page's
// first bin's start, its width and count, for the telemetry series.
func (f *fineTimeline) timeline(tl *Timeline, from, to int64, bins int) (start, width int64, n int) {
	per := max(((to-from+1)+int64(bins)-1)/int64(bins), 1)
	m := (per + f.g - 1) / f.g
	width = m * f.g
	k0 := floorDiv(from, f.g)
	start = k0 * f.g
	n = int(floorDiv(to, f.g)-k0)/int(m) + 1
	tokens, busy, errs := make([]int64, n), make([]int64, n), make([]int64, n)
	for k, b := range f.bins {
		i := min(max(int((k-k0)/m), 0), n-1)
		tokens[i] += b.tokens
		busy[i] += b.busy
		errs[i] += b.errs
	}
	tl.StartS, tl.BinS = float64(start)/1e9, float64(width)/1e9
	for i := range n {
		tl.T = append(tl.T, float64(start+int64(i)*width)/1e9)
		tl.OutputTPS = append(tl.OutputTPS, float64(tokens[i])/tokenUnit/tl.BinS)
		tl.Running = append(tl.Running, float64(busy[i])/float64(width))
		tl.Errors = append(tl.Errors, float64(errs[i]))
	}
	return start, width, n
}

// extent is the requests' first send and last end.
func (f *fineTimeline) extent() (from, to int64) {
	first := true
	for _, s := range f.spans {
		if first || s[0] < from {
			from = s[0]
		}
		if first || s[1] > to {
			to = s[1]
		}
		first = false
	}
	return from, to
}

func (f *fineTimeline) pointSpans(c *Curves) []TimelineSpan {
	out := make([]TimelineSpan, 0, len(f.spans))
	for p, s := range f.spans {
		out = append(out, TimelineSpan{Index: int(p), Label: c.loads[int(p)].Label(), FromS: float64(s[0]) / 1e9, ToS: float64(s[1]) / 1e9})
	}
	slices.SortFunc(out, func(a, b TimelineSpan) int { return a.Index - b.Index })
	return out
}
