package telemetry

// The batch summaries as they were before the streaming Summaries: every
// sample of the run in memory, each figure a scan over the window. They
// are the oracle TestSummariesMatchBatch holds the streaming code to.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// refReading is one server sample of one instance.
type refReading struct {
	t int64
	s *Server
}

// refSummarizeServer summarises the window's server samples (docs/METRICS.md,
// "Server metrics"): gauges as mean and max over the window's readings,
// summed over instances at each refReading (fractions averaged); counters and
// histograms as deltas from the last refReading at or before From to the last
// at or before To, summed over instances, a restart in between counted
// from zero. Durations are converted to model time (× w.Scale, ms). Nil
// when the window has no server refReading, or none the tables could map.
func refSummarizeServer(w Window) *ServerPoint {
	byInst, ticks := refServerReadings(w)
	if len(ticks) == 0 {
		return nil
	}
	sp := &ServerPoint{
		Running:      refGaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.Running }, false),
		Waiting:      refGaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.Waiting }, false),
		KVCacheUsage: refGaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.KVCacheUsage }, true),
		Preemptions:  refCounterOver(w, byInst, counterFields[0].get),
		TTFTMS:       quantiles(refHistOver(w, byInst, histFields[0].get), w.Scale),
		QueueMS:      quantiles(refHistOver(w, byInst, histFields[1].get), w.Scale),
	}
	sp.PrefixCacheHitRate = refHitRate(w, byInst, ticks)
	if lost := refCounterOver(w, byInst, func(s *Server) *float64 { return s.SimClockLost }); lost != nil {
		ms := *lost * 1e3 * w.Scale
		sp.SimClockLostMS = &ms
	}
	sp.PrefillTPS = refPrefillTPS(w, byInst)
	if *sp == (ServerPoint{}) {
		return nil
	}
	return sp
}

// refServerReadings groups the server samples by instance (each in time
// order), up to To; ticks are the times of those inside [From, To].
func refServerReadings(w Window) (map[string][]refReading, []int64) {
	byInst := map[string][]refReading{}
	var ticks []int64
	for _, s := range w.Samples {
		if s.Source != KindServer || s.Server == nil || s.TNS > w.To {
			continue
		}
		byInst[s.Instance] = append(byInst[s.Instance], refReading{s.TNS, s.Server})
		if s.TNS >= w.From {
			ticks = append(ticks, s.TNS)
		}
	}
	return byInst, ticks
}

// refGaugeOver is a refGauge's mean and max over the window's ticks; at each
// tick, the sum (or, for a fraction, the mean) of each instance's refLatest
// refReading inside the window. Nil when no refReading has the refGauge.
func refGaugeOver(w Window, byInst map[string][]refReading, ticks []int64, get func(*Server) *float64, fraction bool) *MeanMax {
	// Only the readings that have the refGauge: refLatest then finds one in a
	// step or two, where a refGauge an engine never exports would send it
	// back over the whole window at every tick (quadratic in a long run).
	have := make(map[string][]refReading, len(byInst))
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
			if x := refLatest(rs, w.From, t, get); x != nil {
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

// refLatest is the value of rs's last refReading in [from, t] having the refGauge.
func refLatest(rs []refReading, from, t int64, get func(*Server) *float64) *float64 {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].t > t })
	for i--; i >= 0 && rs[i].t >= from; i-- {
		if v := get(rs[i].s); v != nil {
			return v
		}
	}
	return nil
}

// refSpan is the readings a delta runs over: from the last at or before
// From (else the first inside the window) to the last at or before To.
func refSpan[T any](rs []refReading, from int64, get func(*Server) *T) []*T {
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

// refCounterOver is a counter's increase over the window, summed over
// instances; nil when no instance has two readings of it.
func refCounterOver(w Window, byInst map[string][]refReading, get func(*Server) *float64) *float64 {
	var total *float64
	for _, rs := range byInst {
		vals := refSpan(rs, w.From, get)
		// A counter first read inside the window, after a reading of its
		// instance without it, was created since, at 0.
		if i := slices.IndexFunc(rs, func(r refReading) bool { return get(r.s) != nil }); i > 0 && rs[i].t > w.From {
			vals = append([]*float64{new(0.0)}, vals...)
		}
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

// refHistOver is a histogram's bucket increases over the window, summed
// over instances.
func refHistOver(w Window, byInst map[string][]refReading, get func(*Server) *Histogram) *Histogram {
	var acc *Histogram
	for _, rs := range byInst {
		vals := refSpan(rs, w.From, get)
		for i := 1; i < len(vals); i++ {
			acc = addHist(acc, histDelta(vals[i-1], vals[i]))
		}
	}
	return acc
}

// refPrefillTPS is the prompt tokens of the requests that finished in the
// window over their prefill time, in model time; nil without both series
// or without prefill time.
func refPrefillTPS(w Window, byInst map[string][]refReading) *float64 {
	secs := refCounterOver(w, byInst, func(s *Server) *float64 { return s.PrefillSeconds })
	toks := refCounterOver(w, byInst, func(s *Server) *float64 { return s.PrefillTokens })
	if secs == nil || toks == nil || *secs <= 0 || w.Scale <= 0 {
		return nil
	}
	return num(*toks / (*secs * w.Scale))
}

// refHitRate is the prefix cache's hits over queries in the window, from
// the two counters where the engine has them, else the mean of its
// hit-rate refGauge; nil when there were no queries and no refGauge.
func refHitRate(w Window, byInst map[string][]refReading, ticks []int64) *float64 {
	q := refCounterOver(w, byInst, counterFields[3].get)
	h := refCounterOver(w, byInst, counterFields[4].get)
	if q != nil && h != nil && *q > 0 {
		return num(*h / *q)
	}
	if g := refGaugeOver(w, byInst, ticks, func(s *Server) *float64 { return s.PrefixCacheHitRate }, true); g != nil {
		return &g.Mean
	}
	return nil
}

// refGpuReading is one GPU sample at its time on the run clock.
type refGpuReading struct {
	t int64
	g *GPU
}

// refGpuSeries is one GPU's readings: the last one at or before the window's
// From (the baseline a counter's delta starts from), then those inside.
type refGpuSeries struct {
	instance string
	index    int
	baseline *refGpuReading
	in       []refGpuReading
}

// refSummarizeGPUs summarises each GPU seen in the window, told apart by the
// source's Instance and the GPU's index (NVML and DCGM both give GPUs),
// in that order. A GPU with no refReading inside [From, To] is absent.
// docs/METRICS.md, "GPUs", defines each figure.
func refSummarizeGPUs(w Window) []GPUPoint {
	var out []GPUPoint
	for _, s := range refGpuSeriesOf(w) {
		if len(s.in) > 0 {
			out = append(out, s.refPoint(w))
		}
	}
	return out
}

// refGpuSeriesOf groups the window's GPU samples up to To by GPU.
func refGpuSeriesOf(w Window) []*refGpuSeries {
	type key struct {
		instance string
		index    int
	}
	byKey := map[key]*refGpuSeries{}
	var all []*refGpuSeries
	for _, smp := range w.Samples {
		if smp.GPU == nil || smp.TNS > w.To {
			continue
		}
		k := key{smp.Instance, smp.GPU.Index}
		s := byKey[k]
		if s == nil {
			s = &refGpuSeries{instance: k.instance, index: k.index}
			byKey[k], all = s, append(all, s)
		}
		r := refGpuReading{t: smp.TNS, g: smp.GPU}
		if r.t > w.From {
			s.in = append(s.in, r)
		} else if s.baseline == nil || r.t >= s.baseline.t {
			s.baseline = &r
			if r.t == w.From {
				s.in = append(s.in, r)
			}
		}
	}
	for _, s := range all {
		slices.SortStableFunc(s.in, func(a, b refGpuReading) int { return cmp.Compare(a.t, b.t) })
	}
	slices.SortFunc(all, func(a, b *refGpuSeries) int {
		return cmp.Or(cmp.Compare(a.instance, b.instance), cmp.Compare(a.index, b.index))
	})
	return all
}

// point computes the GPU's figures: gauges over the readings inside the
// window, refEnergy and throttling over time from the baseline on.
func (s *refGpuSeries) refPoint(w Window) GPUPoint {
	p := GPUPoint{Instance: s.instance, Index: s.index}
	for _, r := range s.in {
		p.Name = cmp.Or(r.g.Name, p.Name)
		p.Driver = cmp.Or(r.g.Driver, p.Driver)
	}
	_, p.MemoryUsedBytesMax = refGauge(s.in, func(g *GPU) *float64 { return g.MemoryUsedBytes })
	_, p.MemoryTotalBytes = refGauge(s.in, func(g *GPU) *float64 { return g.MemoryTotalBytes })
	p.UtilizationMean, _ = refGauge(s.in, func(g *GPU) *float64 { return g.Utilization })
	p.PowerWMean, p.PowerWMax = refGauge(s.in, func(g *GPU) *float64 { return g.PowerW })
	_, p.TemperatureCMax = refGauge(s.in, func(g *GPU) *float64 { return g.TemperatureC })
	timeline := s.in
	if s.baseline != nil && s.baseline.t < w.From {
		timeline = append([]refGpuReading{*s.baseline}, s.in...)
	}
	p.EnergyJ = refEnergy(timeline)
	p.ThrottleS, p.ThrottleReasons = refThrottled(timeline, w)
	return p
}

// refGauge is the mean and the max of a field over the readings that have
// it; both nil when none does.
func refGauge(rs []refGpuReading, field func(*GPU) *float64) (mean, max *float64) {
	var sum float64
	n := 0
	for _, r := range rs {
		v := field(r.g)
		if v == nil {
			continue
		}
		if n == 0 || *v > *max {
			max = new(*v)
		}
		sum += *v
		n++
	}
	if n == 0 {
		return nil, nil
	}
	return new(sum / float64(n)), max
}

// refEnergy is the joules used from the first refReading to the last, interval
// by interval: the device counter's difference where both ends have it
// and it did not go backwards (a driver reload resets it), else the
// trapezoid of the two power readings. Joules are physical, never scaled
// to model time. Nil when no interval has either.
func refEnergy(rs []refGpuReading) *float64 {
	var sum float64
	known := false
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1].g, rs[i].g
		switch {
		case a.EnergyJ != nil && b.EnergyJ != nil && *b.EnergyJ >= *a.EnergyJ:
			sum += *b.EnergyJ - *a.EnergyJ
		case a.PowerW != nil && b.PowerW != nil:
			sum += (*a.PowerW + *b.PowerW) / 2 * float64(rs[i].t-rs[i-1].t) / 1e9
		default:
			continue
		}
		known = true
	}
	if !known {
		return nil
	}
	return new(sum)
}

// refThrottled is how long, in model time, a limiting clock reason was
// active inside [From, To], in all and by reason. A refReading's reasons hold
// until the next refReading (the last one's until To). Both are absent when
// no refReading says whether the clocks were limited.
func refThrottled(rs []refGpuReading, w Window) (*float64, map[string]float64) {
	scale := w.Scale
	if scale <= 0 {
		scale = 1 // a window built without a scale is on a real-time clock
	}
	var total float64
	by := map[string]float64{}
	known := false
	for i, r := range rs {
		if r.g.Throttle == nil {
			continue
		}
		known = true
		end := w.To
		if i+1 < len(rs) {
			end = min(rs[i+1].t, w.To)
		}
		limits := limitingReasons(r.g.Throttle)
		d := float64(end-max(r.t, w.From)) / 1e9 * scale
		if d <= 0 || len(limits) == 0 {
			continue
		}
		total += d
		for _, reason := range limits {
			by[reason] += d
		}
	}
	if !known {
		return nil, nil
	}
	if len(by) == 0 {
		by = nil
	}
	return new(total), by
}

// refSummarizeHost summarises the window's host samples: the server tree's
// peak resident memory and mean CPU, the least memory the machine had
// available, its mean CPU and the hypervisor's mean steal. A figure no
// sample had is absent.
func refSummarizeHost(w Window) *HostPoint {
	var rss, avail optExtremes
	var cpu, host, steal optMean
	for i := range w.Samples {
		s := &w.Samples[i]
		if s.Source != KindHost || s.Host == nil || s.TNS < w.From || s.TNS > w.To {
			continue
		}
		rss.add(s.Host.ServerRSSBytes)
		avail.add(s.Host.RAMAvailBytes)
		cpu.add(s.Host.ServerCPUPercent)
		host.add(s.Host.CPUPercent)
		steal.add(s.Host.StealPercent)
	}
	p := HostPoint{ServerRSSBytesMax: rss.max, ServerCPUPercentMean: cpu.value(),
		RAMAvailableBytesMin: avail.min, HostCPUPercentMean: host.value(), StealPercentMean: steal.value()}
	if p == (HostPoint{}) {
		return nil
	}
	return &p
}

// refSummarizeClient summarises the window's client samples: the mean and
// peak CPU share (of one core) and the most goroutines; nil when the
// window has none.
func refSummarizeClient(w Window) *ClientPoint {
	var p ClientPoint
	n := 0
	for i := range w.Samples {
		s := &w.Samples[i]
		if s.Source != KindClient || s.Client == nil || s.TNS < w.From || s.TNS > w.To {
			continue
		}
		n++
		p.CPUPercentMean += s.Client.CPUPercent
		p.CPUPercentMax = max(p.CPUPercentMax, s.Client.CPUPercent)
		p.GoroutinesMax = max(p.GoroutinesMax, s.Client.Goroutines)
	}
	if n == 0 {
		return nil
	}
	p.CPUPercentMean /= float64(n)
	return &p
}

// refSummarize is the telemetry of one window (a load point's measured
// refSpan, or a slice of it): each kind's summary, the events in the window
// by kind, and the GPUs' refEnergy per output token when the refEnergy and the
// tokens (outputTokens, generated in the window) are both known. It is
// nil when the window holds nothing at all.
func refSummarize(w Window, outputTokens float64) *Point {
	p := &Point{
		Server: refSummarizeServer(w),
		GPUs:   refSummarizeGPUs(w),
		Host:   refSummarizeHost(w),
		Client: refSummarizeClient(w),
		Events: refCountEvents(w),
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

// refCountEvents counts the events in the window by kind; nil when none.
func refCountEvents(w Window) map[string]int {
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

// refEventLines says what happened during the run, a line per kind of event,
// with when (s of
// model time since the start: the run clock times scale) and the first
// detail. Nil when nothing happened.
func refEventLines(samples []Sample, scale float64) []string {
	byKind := map[string][]Sample{}
	for _, s := range samples {
		if s.Event != nil {
			byKind[s.Event.Kind] = append(byKind[s.Event.Kind], s)
		}
	}
	var lines []string
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		lines = append(lines, refEventLine(kind, byKind[kind], scale))
	}
	return lines
}

func refEventLine(kind string, evs []Sample, scale float64) string {
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
