package telemetry

// serverGauges are the server gauges a window summarises: mean and max
// over its readings, summed over instances at each reading (a fraction
// averaged over them).
var serverGauges = []struct {
	get      func(*Server) *float64
	fraction bool
}{
	{func(s *Server) *float64 { return s.Running }, false},
	{func(s *Server) *float64 { return s.Waiting }, false},
	{func(s *Server) *float64 { return s.KVCacheUsage }, true},
	{func(s *Server) *float64 { return s.PrefixCacheHitRate }, true},
}

// Indexes of serverGauges and of counterFields that the summary names.
const (
	gaugeRunning, gaugeWaiting, gaugeKVCache, gaugeHitRate = 0, 1, 2, 3

	ctrPreemptions, ctrCacheQueries, ctrCacheHits, ctrSimClockLost = 0, 3, 4, 5
	ctrPrefillSeconds, ctrPrefillTokens                            = 6, 7
	histTTFT, histQueue                                            = 0, 1
)

// serverAcc summarises the server samples of one window as they come, in
// time order (docs/METRICS.md, "Server metrics"): gauges as mean and max
// over the window's readings, summed over instances at each reading
// (fractions averaged); counters and histograms as deltas from the last
// reading at or before From to the last at or before To, summed over
// instances, a restart in between counted from zero. A reading after To
// is not looked at.
type serverAcc struct {
	from, to int64
	byInst   map[string]*instAcc
	insts    []*instAcc // in the order first seen
	gauges   []gaugeAcc
	// readings inside the window at tickT not yet evaluated: a gauge's
	// value at a reading sums each instance's latest reading up to that
	// moment, theirs at the same moment included
	tickT int64
	ticks int
	any   bool // a reading inside the window was seen
}

// instAcc is one instance's state in a window: each gauge's latest value
// inside it, each counter's and histogram's delta so far.
type instAcc struct {
	name string
	// seen: the instance has been read before (in this window or the
	// one it started from).
	seen  bool
	cur   []*float64
	ctrs  []counterAcc
	hists []histAcc
}

// counterAcc is a counter's increase from its first reading (the last at
// or before From, else the first inside the window) to its latest.
type counterAcc struct {
	prev, delta float64
	n           int // readings counted
}

func (c *counterAcc) add(v float64, baseline bool) {
	switch {
	case baseline || c.n == 0:
		*c = counterAcc{prev: v, n: 1}
	default:
		c.delta += counterDelta(c.prev, v)
		c.prev = v
		c.n++
	}
}

// histAcc is a histogram's bucket increases, as counterAcc's.
type histAcc struct {
	prev, delta *Histogram
	n           int
}

func (h *histAcc) add(v *Histogram, baseline bool) {
	switch {
	case baseline || h.n == 0:
		*h = histAcc{prev: v, n: 1}
	default:
		h.delta = addHist(h.delta, histDelta(h.prev, v))
		h.prev = v
		h.n++
	}
}

// meanMax is a gauge's mean and max over the readings (gaugeAcc); nil
// when there was none, or either is not finite.
func meanMax(g *gaugeAcc) *MeanMax {
	if g.mean.n == 0 {
		return nil
	}
	mm := &MeanMax{Mean: *g.mean.value(), Max: *g.ext.max}
	if !finite(mm.Mean) || !finite(mm.Max) {
		return nil
	}
	return mm
}

func newServerAcc(from, to int64) *serverAcc {
	return &serverAcc{from: from, to: to, byInst: map[string]*instAcc{}, gauges: make([]gaugeAcc, len(serverGauges))}
}

// startFrom gives a window that starts now the counters' and histograms'
// baselines that base, which has seen every reading before it, holds.
func (a *serverAcc) startFrom(base *serverAcc) {
	for _, b := range base.insts {
		in := a.inst(b.name)
		in.seen = b.seen
		copy(in.ctrs, b.ctrs)
		copy(in.hists, b.hists)
	}
}

func (a *serverAcc) inst(name string) *instAcc {
	in := a.byInst[name]
	if in == nil {
		in = &instAcc{name: name, cur: make([]*float64, len(serverGauges)), ctrs: make([]counterAcc, len(counterFields)), hists: make([]histAcc, len(histFields))}
		a.byInst[name] = in
		a.insts = append(a.insts, in)
	}
	return in
}

// add takes one sample; anything but a server reading up to To is passed
// over.
func (a *serverAcc) add(s *Sample) {
	if s.Source != KindServer || s.Server == nil || s.TNS > a.to {
		return
	}
	t := s.TNS
	if a.ticks > 0 && t != a.tickT {
		a.evalTicks()
	}
	in := a.inst(s.Instance)
	baseline := t <= a.from
	for i, f := range counterFields {
		if v := f.get(s.Server); v != nil {
			if c := &in.ctrs[i]; c.n == 0 && in.seen && !baseline {
				// A counter the instance did not export at its last
				// reading was created since, at 0: a labelled counter
				// appears on its first increment (SGLang's
				// cached_tokens_total on its first hit).
				*c = counterAcc{n: 1}
			}
			in.ctrs[i].add(*v, baseline)
		}
	}
	for i, f := range histFields {
		if v := f.get(s.Server); v != nil {
			in.hists[i].add(v, baseline)
		}
	}
	in.seen = true
	if t < a.from {
		return
	}
	for i, g := range serverGauges {
		if v := g.get(s.Server); v != nil {
			in.cur[i] = v
		}
	}
	a.tickT, a.any = t, true
	a.ticks++
}

// evalTicks adds each gauge's value at the readings of tickT: the sum (or,
// for a fraction, the mean) of each instance's latest reading inside the
// window, once per reading.
func (a *serverAcc) evalTicks() {
	for i, g := range serverGauges {
		v, k := 0.0, 0
		for _, in := range a.insts {
			if x := in.cur[i]; x != nil {
				v += *x
				k++
			}
		}
		if k == 0 {
			continue
		}
		if g.fraction {
			v /= float64(k)
		}
		for range a.ticks {
			a.gauges[i].add(&v)
		}
	}
	a.ticks = 0
}

// point is the window's server figures, with durations converted to
// model time (× scale, ms); nil when the window had no server reading,
// or none the tables could map.
func (a *serverAcc) point(scale float64) *ServerPoint {
	if a.ticks > 0 {
		a.evalTicks()
	}
	if !a.any {
		return nil
	}
	sp := &ServerPoint{
		Running:      meanMax(&a.gauges[gaugeRunning]),
		Waiting:      meanMax(&a.gauges[gaugeWaiting]),
		KVCacheUsage: meanMax(&a.gauges[gaugeKVCache]),
		Preemptions:  a.counter(ctrPreemptions),
		TTFTMS:       quantiles(a.hist(histTTFT), scale),
		QueueMS:      quantiles(a.hist(histQueue), scale),
	}
	sp.PrefixCacheHitRate = a.hitRate()
	if lost := a.counter(ctrSimClockLost); lost != nil {
		ms := *lost * 1e3 * scale
		sp.SimClockLostMS = &ms
	}
	sp.PrefillTPS = a.prefillTPS(scale)
	if *sp == (ServerPoint{}) {
		return nil
	}
	return sp
}

// counter is a counter's increase over the window, summed over
// instances; nil when no instance has two readings of it.
func (a *serverAcc) counter(i int) *float64 {
	var total *float64
	for _, in := range a.insts {
		c := in.ctrs[i]
		if c.n < 2 {
			continue
		}
		if total == nil {
			total = new(float64)
		}
		*total += c.delta
	}
	if total != nil {
		return num(*total)
	}
	return nil
}

// hist is a histogram's bucket increases over the window, summed over
// instances.
func (a *serverAcc) hist(i int) *Histogram {
	var acc *Histogram
	for _, in := range a.insts {
		acc = addHist(acc, in.hists[i].delta)
	}
	return acc
}

// prefillTPS is the prompt tokens of the requests that finished in the
// window over their prefill time, in model time; nil without both series
// or without prefill time.
func (a *serverAcc) prefillTPS(scale float64) *float64 {
	secs, toks := a.counter(ctrPrefillSeconds), a.counter(ctrPrefillTokens)
	if secs == nil || toks == nil || *secs <= 0 || scale <= 0 {
		return nil
	}
	return num(*toks / (*secs * scale))
}

// hitRate is the prefix cache's hits over queries in the window, from
// the two counters where the engine has them, else the mean of its
// hit-rate gauge; nil when there were no queries and no gauge.
func (a *serverAcc) hitRate() *float64 {
	q, h := a.counter(ctrCacheQueries), a.counter(ctrCacheHits)
	if q != nil && h != nil && *q > 0 {
		return num(*h / *q)
	}
	if g := meanMax(&a.gauges[gaugeHitRate]); g != nil {
		return &g.Mean
	}
	return nil
}

// summarizeServer summarises the window's server samples (serverAcc).
func summarizeServer(w Window) *ServerPoint {
	a := newServerAcc(w.From, w.To)
	for i := range w.Samples {
		a.add(&w.Samples[i])
	}
	return a.point(w.Scale)
}
