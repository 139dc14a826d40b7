package telemetry

import "sort"

// reading is one server sample of one instance.
type reading struct {
	t int64
	s *Server
}

// summarizeServer summarises the window's server samples (docs/METRICS.md,
// "Server metrics"): gauges as mean and max over the window's readings,
// summed over instances at each reading (fractions averaged); counters and
// histograms as deltas from the last reading at or before From to the last
// at or before To, summed over instances, a restart in between counted
// from zero. Durations are converted to model time (× w.Scale, ms). Nil
// when the window has no server reading, or none the tables could map.
func summarizeServer(w Window) *ServerPoint {
	byInst, ticks := serverReadings(w)
	if len(ticks) == 0 {
		return nil
	}
	sp := &ServerPoint{
		Running:      gaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.Running }, false),
		Waiting:      gaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.Waiting }, false),
		KVCacheUsage: gaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.KVCacheUsage }, true),
		Preemptions:  counterOver(w, byInst, counterFields[0].get),
		TTFTMS:       quantiles(histOver(w, byInst, histFields[0].get), w.Scale),
		QueueMS:      quantiles(histOver(w, byInst, histFields[1].get), w.Scale),
	}
	sp.PrefixCacheHitRate = hitRate(w, byInst, ticks)
	if lost := counterOver(w, byInst, func(s *Server) *float64 { return s.SimClockLost }); lost != nil {
		ms := *lost * 1e3 * w.Scale
		sp.SimClockLostMS = &ms
	}
	sp.PrefillTPS = prefillTPS(w, byInst)
	if *sp == (ServerPoint{}) {
		return nil
	}
	return sp
}

// serverReadings groups the server samples by instance (each in time
// order), up to To; ticks are the times of those inside [From, To].
func serverReadings(w Window) (map[string][]reading, []int64) {
	byInst := map[string][]reading{}
	var ticks []int64
	for _, s := range w.Samples {
		if s.Source != KindServer || s.Server == nil || s.TNS > w.To {
			continue
		}
		byInst[s.Instance] = append(byInst[s.Instance], reading{s.TNS, s.Server})
		if s.TNS >= w.From {
			ticks = append(ticks, s.TNS)
		}
	}
	return byInst, ticks
}

// gaugeOver is a gauge's mean and max over the window's ticks; at each
// tick, the sum (or, for a fraction, the mean) of each instance's latest
// reading inside the window. Nil when no reading has the gauge.
func gaugeOver(w Window, byInst map[string][]reading, ticks []int64, get func(*Server) *float64, fraction bool) *MeanMax {
	// Only the readings that have the gauge: latest then finds one in a
	// step or two, where a gauge an engine never exports would send it
	// back over the whole window at every tick (quadratic in a long run).
	have := make(map[string][]reading, len(byInst))
	for inst, rs := range byInst {
		for _, r := range rs {
			if get(r.s) != nil {
				have[inst] = append(have[inst], r)
			}
		}
	}
	var sum float64
	var mm *MeanMax
	n := 0
	for _, t := range ticks {
		v, k := 0.0, 0
		for _, rs := range have {
			if x := latest(rs, w.From, t, get); x != nil {
				v += *x
				k++
			}
		}
		if k == 0 {
			continue
		}
		if fraction {
			v /= float64(k)
		}
		if mm == nil {
			mm = &MeanMax{Max: v}
		}
		mm.Max = max(mm.Max, v)
		sum += v
		n++
	}
	if mm == nil {
		return nil
	}
	mm.Mean = sum / float64(n)
	if !finite(mm.Mean) || !finite(mm.Max) {
		return nil
	}
	return mm
}

// latest is the value of rs's last reading in [from, t] having the gauge.
func latest(rs []reading, from, t int64, get func(*Server) *float64) *float64 {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].t > t })
	for i--; i >= 0 && rs[i].t >= from; i-- {
		if v := get(rs[i].s); v != nil {
			return v
		}
	}
	return nil
}

// span is the readings a delta runs over: from the last at or before
// From (else the first inside the window) to the last at or before To.
func span[T any](rs []reading, from int64, get func(*Server) *T) []*T {
	var vals []*T
	start := 0
	for _, r := range rs {
		if v := get(r.s); v != nil {
			if r.t <= from {
				start = len(vals)
			}
			vals = append(vals, v)
		}
	}
	return vals[start:]
}

// counterOver is a counter's increase over the window, summed over
// instances; nil when no instance has two readings of it.
func counterOver(w Window, byInst map[string][]reading, get func(*Server) *float64) *float64 {
	var total *float64
	for _, rs := range byInst {
		vals := span(rs, w.From, get)
		if len(vals) < 2 {
			continue
		}
		d := 0.0
		for i := 1; i < len(vals); i++ {
			d += counterDelta(*vals[i-1], *vals[i])
		}
		if total == nil {
			total = new(float64)
		}
		*total += d
	}
	if total != nil {
		return num(*total)
	}
	return nil
}

// histOver is a histogram's bucket increases over the window, summed
// over instances.
func histOver(w Window, byInst map[string][]reading, get func(*Server) *Histogram) *Histogram {
	var acc *Histogram
	for _, rs := range byInst {
		vals := span(rs, w.From, get)
		for i := 1; i < len(vals); i++ {
			acc = addHist(acc, histDelta(vals[i-1], vals[i]))
		}
	}
	return acc
}

// prefillTPS is the prompt tokens of the requests that finished in the
// window over their prefill time, in model time; nil without both series
// or without prefill time.
func prefillTPS(w Window, byInst map[string][]reading) *float64 {
	secs := counterOver(w, byInst, func(s *Server) *float64 { return s.PrefillSeconds })
	toks := counterOver(w, byInst, func(s *Server) *float64 { return s.PrefillTokens })
	if secs == nil || toks == nil || *secs <= 0 || w.Scale <= 0 {
		return nil
	}
	return num(*toks / (*secs * w.Scale))
}

// hitRate is the prefix cache's hits over queries in the window, from
// the two counters where the engine has them, else the mean of its
// hit-rate gauge; nil when there were no queries and no gauge.
func hitRate(w Window, byInst map[string][]reading, ticks []int64) *float64 {
	q := counterOver(w, byInst, counterFields[3].get)
	h := counterOver(w, byInst, counterFields[4].get)
	if q != nil && h != nil && *q > 0 {
		return num(*h / *q)
	}
	if g := gaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.PrefixCacheHitRate }, true); g != nil {
		return &g.Mean
	}
	return nil
}
