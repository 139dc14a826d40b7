package metrics

import (
	"cmp"
	"math"
	"slices"
)

// Timeline is a run cut into equal bins of model time: what the client
// saw (output tokens per second, requests in flight, failures) and, where
// sampled, what the server and GPUs showed. Every slice has one entry per
// bin; a telemetry figure is nil in a bin with no sample of it.
type Timeline struct {
	// StartS is the first bin's start and BinS the bins' width, seconds
	// since the run's epoch; T holds each bin's start.
	StartS float64   `json:"start_s"`
	BinS   float64   `json:"bin_s"`
	T      []float64 `json:"t_s"`
	// OutputTPS spreads each completed request's output tokens evenly from
	// its first token to its end; Running is the mean number of requests
	// in flight over the bin; Errors counts the requests that failed in it.
	OutputTPS []float64 `json:"output_tps"`
	Running   []float64 `json:"running"`
	Errors    []float64 `json:"errors"`
	// KVCachePct is the server's KV-cache use (percent, mean over the
	// bin); VRAMGiB and PowerW are summed over the GPUs (each GPU's mean
	// over the bin); TempC is the hottest GPU's mean.
	KVCachePct []*float64 `json:"kv_cache_pct"`
	VRAMGiB    []*float64 `json:"vram_gib"`
	PowerW     []*float64 `json:"power_w"`
	TempC      []*float64 `json:"temperature_c"`
	// Spans is each point's stretch of the timeline, first send to last end.
	Spans []TimelineSpan `json:"spans"`
}

// TimelineSpan is where one load point ran on the timeline, in seconds.
type TimelineSpan struct {
	Index int     `json:"index"`
	Label string  `json:"label"`
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
}

// Timeline cuts the run into at most bins bins of equal width.
func (c *Curves) Timeline(bins int) Timeline {
	tl := Timeline{T: []float64{}, OutputTPS: []float64{}, Running: []float64{}, Errors: []float64{},
		KVCachePct: []*float64{}, VRAMGiB: []*float64{}, PowerW: []*float64{}, TempC: []*float64{}, Spans: []TimelineSpan{}}
	from, to, ok := c.extent()
	if !ok {
		return tl
	}
	if c.fine != nil {
		start, width, n := c.fine.timeline(&tl, from, to, max(bins, 1))
		c.telemetryBins(&tl, start, width, n)
		tl.Spans = c.fine.pointSpans(c)
		return tl
	}
	span := to - from + 1
	width := (span + int64(max(bins, 1)) - 1) / int64(max(bins, 1))
	n := int((span + width - 1) / width)
	tl.StartS, tl.BinS = float64(from)/1e9, float64(width)/1e9
	b := timelineBins{from: from, width: width, tokens: make([]float64, n), busy: make([]float64, n), errs: make([]float64, n)}
	c.sortRequests()
	for _, r := range c.reqs {
		b.add(r)
	}
	for i := range n {
		tl.T = append(tl.T, float64(from+int64(i)*width)/1e9)
		tl.OutputTPS = append(tl.OutputTPS, b.tokens[i]/tl.BinS)
		tl.Running = append(tl.Running, b.busy[i]/float64(width))
		tl.Errors = append(tl.Errors, b.errs[i])
	}
	c.telemetryBins(&tl, from, width, n)
	tl.Spans = c.spans()
	return tl
}

// extent is the span of the requests and telemetry samples, in ns.
func (c *Curves) extent() (from, to int64, ok bool) {
	from, to = math.MaxInt64, math.MinInt64
	if c.fine != nil && len(c.fine.spans) > 0 {
		from, to = c.fine.extent()
	}
	for _, r := range c.reqs {
		from, to = min(from, r.sent), max(to, r.end)
	}
	for _, s := range c.tel {
		from, to = min(from, s.t), max(to, s.t)
	}
	return from, to, from <= to
}

type timelineBins struct {
	from, width        int64
	tokens, busy, errs []float64
}

func (b *timelineBins) bin(t int64) int {
	return min(max(int((t-b.from)/b.width), 0), len(b.busy)-1)
}

// add spreads a request's in-flight time and its output tokens over the
// bins it overlaps.
func (b *timelineBins) add(r reqSpan) {
	b.spread(b.busy, r.sent, r.end, float64(r.end-r.sent))
	if r.failed {
		b.errs[b.bin(r.end)]++
		return
	}
	if r.first > 0 && r.end > r.first {
		b.spread(b.tokens, r.first, r.end, float64(r.out))
	} else {
		b.tokens[b.bin(r.end)] += float64(r.out)
	}
}

// spread adds total over [t0, t1) in proportion to each bin's overlap.
func (b *timelineBins) spread(into []float64, t0, t1 int64, total float64) {
	if t1 <= t0 {
		return
	}
	for i := b.bin(t0); i <= b.bin(t1-1); i++ {
		lo, hi := b.from+int64(i)*b.width, b.from+int64(i+1)*b.width
		if i == len(into)-1 {
			hi = max(hi, t1)
		}
		if ov := min(hi, t1) - max(lo, t0); ov > 0 {
			into[i] += total * float64(ov) / float64(t1-t0)
		}
	}
}

// telemetryBins fills the telemetry series: each bin's mean per source,
// then GPUs summed (memory, power) or the hottest taken (temperature).
func (c *Curves) telemetryBins(tl *Timeline, from, width int64, n int) {
	kv := make([]meanAcc, n)
	mem, pow, temp := gpuBins{}, gpuBins{}, gpuBins{}
	for _, s := range c.tel {
		i := min(int((s.t-from)/width), n-1)
		if s.gpu < 0 {
			kv[i].add(s.kv)
			continue
		}
		k := gpuBin{i, s.gpu}
		mem.add(k, s.mem)
		pow.add(k, s.powerW)
		temp.add(k, s.tempC)
	}
	for i := range n {
		var v *float64
		if kv[i].n > 0 {
			v = ptr(100 * kv[i].mean())
		}
		tl.KVCachePct = append(tl.KVCachePct, v)
	}
	tl.VRAMGiB = mem.series(n, 1.0/(1<<30), false)
	tl.PowerW = pow.series(n, 1, false)
	tl.TempC = temp.series(n, 1, true)
}

type meanAcc struct{ sum, n float64 }

func (a *meanAcc) add(v *float64) {
	if v != nil {
		a.sum, a.n = a.sum+*v, a.n+1
	}
}

func (a *meanAcc) mean() float64 { return a.sum / a.n }

// gpuBin is one GPU in one bin.
type gpuBin struct{ bin, gpu int }

type gpuBins map[gpuBin]*meanAcc

func (g gpuBins) add(k gpuBin, v *float64) {
	if v == nil {
		return
	}
	if g[k] == nil {
		g[k] = &meanAcc{}
	}
	g[k].add(v)
}

// series folds the GPUs' bin means into one series: their sum, or their
// maximum when hottest; nil where no GPU had a sample.
func (g gpuBins) series(n int, scale float64, hottest bool) []*float64 {
	out := make([]*float64, n)
	for k, a := range g {
		v := scale * a.mean()
		switch {
		case out[k.bin] == nil:
			out[k.bin] = ptr(v)
		case hottest:
			*out[k.bin] = max(*out[k.bin], v)
		default:
			*out[k.bin] += v
		}
	}
	return out
}

// spans is each point's stretch of the timeline, ordered by index.
func (c *Curves) spans() []TimelineSpan {
	at := map[int]*TimelineSpan{}
	for _, r := range c.reqs {
		s := at[int(r.point)]
		if s == nil {
			s = &TimelineSpan{Index: int(r.point), Label: c.loads[int(r.point)].Label(), FromS: float64(r.sent) / 1e9, ToS: float64(r.end) / 1e9}
			at[int(r.point)] = s
		}
		s.FromS, s.ToS = min(s.FromS, float64(r.sent)/1e9), max(s.ToS, float64(r.end)/1e9)
	}
	out := make([]TimelineSpan, 0, len(at))
	for _, s := range at {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b TimelineSpan) int { return a.Index - b.Index })
	return out
}

// sortRequests puts the requests in one order whatever order they were
// added in: the bins' sums are of floats, whose rounding depends on the
// order, and a run's page (records added as they finish) must equal the
// page report builds from the file (records in the file's order).
func (c *Curves) sortRequests() {
	slices.SortFunc(c.reqs, func(a, b reqSpan) int {
		return cmp.Or(cmp.Compare(a.sent, b.sent), cmp.Compare(a.end, b.end), cmp.Compare(a.first, b.first),
			cmp.Compare(a.point, b.point), cmp.Compare(a.out, b.out), compareBool(a.failed, b.failed))
	})
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
