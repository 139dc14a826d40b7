package telemetry

import (
	"cmp"
	"slices"
)

// gpuReading is one GPU sample at its time on the run clock.
type gpuReading struct {
	t int64
	g *GPU
}

// gpuSeries is one GPU's readings: the last one at or before the window's
// From (the baseline a counter's delta starts from), then those inside.
type gpuSeries struct {
	instance string
	index    int
	baseline *gpuReading
	in       []gpuReading
}

// summarizeGPUs summarises each GPU seen in the window, told apart by the
// source's Instance and the GPU's index (NVML and DCGM both give GPUs),
// in that order. A GPU with no reading inside [From, To] is absent.
// docs/METRICS.md, "GPUs", defines each figure.
func summarizeGPUs(w Window) []GPUPoint {
	var out []GPUPoint
	for _, s := range gpuSeriesOf(w) {
		if len(s.in) > 0 {
			out = append(out, s.point(w))
		}
	}
	return out
}

// gpuSeriesOf groups the window's GPU samples up to To by GPU.
func gpuSeriesOf(w Window) []*gpuSeries {
	type key struct {
		instance string
		index    int
	}
	byKey := map[key]*gpuSeries{}
	var all []*gpuSeries
	for _, smp := range w.Samples {
		if smp.GPU == nil || smp.TNS > w.To {
			continue
		}
		k := key{smp.Instance, smp.GPU.Index}
		s := byKey[k]
		if s == nil {
			s = &gpuSeries{instance: k.instance, index: k.index}
			byKey[k], all = s, append(all, s)
		}
		r := gpuReading{t: smp.TNS, g: smp.GPU}
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
		slices.SortStableFunc(s.in, func(a, b gpuReading) int { return cmp.Compare(a.t, b.t) })
	}
	slices.SortFunc(all, func(a, b *gpuSeries) int {
		return cmp.Or(cmp.Compare(a.instance, b.instance), cmp.Compare(a.index, b.index))
	})
	return all
}

// point computes the GPU's figures: gauges over the readings inside the
// window, energy and throttling over time from the baseline on.
func (s *gpuSeries) point(w Window) GPUPoint {
	p := GPUPoint{Instance: s.instance, Index: s.index}
	for _, r := range s.in {
		p.Name = cmp.Or(r.g.Name, p.Name)
		p.Driver = cmp.Or(r.g.Driver, p.Driver)
	}
	_, p.MemoryUsedBytesMax = gauge(s.in, func(g *GPU) *float64 { return g.MemoryUsedBytes })
	_, p.MemoryTotalBytes = gauge(s.in, func(g *GPU) *float64 { return g.MemoryTotalBytes })
	p.UtilizationMean, _ = gauge(s.in, func(g *GPU) *float64 { return g.Utilization })
	p.PowerWMean, p.PowerWMax = gauge(s.in, func(g *GPU) *float64 { return g.PowerW })
	_, p.TemperatureCMax = gauge(s.in, func(g *GPU) *float64 { return g.TemperatureC })
	timeline := s.in
	if s.baseline != nil && s.baseline.t < w.From {
		timeline = append([]gpuReading{*s.baseline}, s.in...)
	}
	p.EnergyJ = energy(timeline)
	p.ThrottleS, p.ThrottleReasons = throttled(timeline, w)
	return p
}

// gauge is the mean and the max of a field over the readings that have
// it; both nil when none does.
func gauge(rs []gpuReading, field func(*GPU) *float64) (mean, max *float64) {
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

// energy is the joules used from the first reading to the last, interval
// by interval: the device counter's difference where both ends have it
// and it did not go backwards (a driver reload resets it), else the
// trapezoid of the two power readings. Joules are physical, never scaled
// to model time. Nil when no interval has either.
func energy(rs []gpuReading) *float64 {
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

// throttled is how long, in model time, a limiting clock reason was
// active inside [From, To], in all and by reason. A reading's reasons hold
// until the next reading (the last one's until To). Both are absent when
// no reading says whether the clocks were limited.
func throttled(rs []gpuReading, w Window) (*float64, map[string]float64) {
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
