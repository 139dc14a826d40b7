package telemetry

import (
	"cmp"
	"maps"
	"slices"
)

// gpuReading is one GPU sample at its time on the run clock.
type gpuReading struct {
	t int64
	g *GPU
}

// gpuKey tells GPUs apart: by the source that saw them (NVML and DCGM
// both give GPUs) and their index.
type gpuKey struct {
	instance string
	index    int
}

// gpuAcc summarises the GPU samples of one window as they come, in time
// order, GPU by GPU. A reading after To is not looked at.
type gpuAcc struct {
	from, to int64
	scale    float64
	byKey    map[gpuKey]*gpuSeries
}

// gpuSeries is one GPU in a window: the last reading before From (the
// baseline energy and throttling start from), the figures of the
// readings inside, and the timeline (baseline, then the readings inside)
// walked so far.
type gpuSeries struct {
	key      gpuKey
	baseline *gpuReading
	in       int // readings inside [From, To]
	last     *gpuReading
	name     string
	driver   string

	memUsed, memTotal, util, power, temp gaugeAcc

	energy      float64
	energyKnown bool
	throttle    float64
	reasons     map[string]float64
	throttled   bool // a reading of the timeline said whether clocks were limited
}

func newGPUAcc(from, to int64, scale float64) *gpuAcc {
	return &gpuAcc{from: from, to: to, scale: scale, byKey: map[gpuKey]*gpuSeries{}}
}

func (a *gpuAcc) series(k gpuKey) *gpuSeries {
	s := a.byKey[k]
	if s == nil {
		s = &gpuSeries{key: k}
		a.byKey[k] = s
	}
	return s
}

// startFrom gives a window that starts now each GPU's last reading that
// base, which has seen every reading before it, holds.
func (a *gpuAcc) startFrom(base *gpuAcc) {
	for k, b := range base.byKey {
		if b.baseline != nil {
			r := *b.baseline
			a.series(k).baseline = &r
		}
	}
}

// add takes one sample; anything but a GPU reading up to To is passed
// over.
func (a *gpuAcc) add(smp *Sample) {
	if smp.GPU == nil || smp.TNS > a.to {
		return
	}
	s := a.series(gpuKey{smp.Instance, smp.GPU.Index})
	r := gpuReading{t: smp.TNS, g: smp.GPU}
	if r.t < a.from {
		s.baseline = &r
		return
	}
	if s.in == 0 && r.t > a.from && s.baseline != nil {
		// the timeline starts at the last reading before From, unless
		// one came at From itself
		s.walk(*s.baseline, a)
	}
	s.in++
	s.name, s.driver = cmp.Or(r.g.Name, s.name), cmp.Or(r.g.Driver, s.driver)
	s.memUsed.add(r.g.MemoryUsedBytes)
	s.memTotal.add(r.g.MemoryTotalBytes)
	s.util.add(r.g.Utilization)
	s.power.add(r.g.PowerW)
	s.temp.add(r.g.TemperatureC)
	s.walk(r, a)
}

// walk takes the next reading of the timeline: the energy used since the
// previous one, and how long the previous one's limiting clock reasons
// held (until this one, or To).
func (s *gpuSeries) walk(r gpuReading, a *gpuAcc) {
	if r.g.Throttle != nil {
		s.throttled = true
	}
	if p := s.last; p != nil {
		switch {
		case p.g.EnergyJ != nil && r.g.EnergyJ != nil && *r.g.EnergyJ >= *p.g.EnergyJ:
			s.energy += *r.g.EnergyJ - *p.g.EnergyJ
			s.energyKnown = true
		case p.g.PowerW != nil && r.g.PowerW != nil:
			s.energy += (*p.g.PowerW + *r.g.PowerW) / 2 * float64(r.t-p.t) / 1e9
			s.energyKnown = true
		}
		s.hold(*p, min(r.t, a.to), a)
	}
	s.last = &r
}

// hold adds the time, in model time, that r's limiting clock reasons
// held inside the window until end.
func (s *gpuSeries) hold(r gpuReading, end int64, a *gpuAcc) {
	d, limits := a.held(r, end)
	s.throttle, s.reasons = addHeld(s.throttle, s.reasons, d, limits)
}

// addHeld adds d to the total and to each reason's time, when d is a
// time the clocks were limited.
func addHeld(total float64, by map[string]float64, d float64, limits []string) (float64, map[string]float64) {
	if d <= 0 || len(limits) == 0 {
		return total, by
	}
	if by == nil {
		by = map[string]float64{}
	}
	for _, reason := range limits {
		by[reason] += d
	}
	return total + d, by
}

// held is how long r's reading held inside the window until end, in
// model time, and the limiting clock reasons it gave.
func (a *gpuAcc) held(r gpuReading, end int64) (float64, []string) {
	if r.g.Throttle == nil {
		return 0, nil
	}
	scale := a.scale
	if scale <= 0 {
		scale = 1 // a window built without a scale is on a real-time clock
	}
	return float64(end-max(r.t, a.from)) / 1e9 * scale, limitingReasons(r.g.Throttle)
}

// points are the figures of each GPU read inside the window, ordered by
// source and index (docs/METRICS.md, "GPUs"): gauges over the readings
// inside, energy and throttling over time from the baseline on.
func (a *gpuAcc) points() []GPUPoint {
	var out []GPUPoint
	for _, s := range a.byKey {
		if s.in == 0 {
			continue
		}
		p := GPUPoint{Instance: s.key.instance, Index: s.key.index, Name: s.name, Driver: s.driver}
		p.MemoryUsedBytesMax = s.memUsed.ext.max
		p.MemoryTotalBytes = s.memTotal.ext.max
		p.UtilizationMean = s.util.mean.value()
		p.PowerWMean, p.PowerWMax = s.power.mean.value(), s.power.ext.max
		p.TemperatureCMax = s.temp.ext.max
		if s.energyKnown {
			p.EnergyJ = new(s.energy)
		}
		if s.throttled {
			p.ThrottleS, p.ThrottleReasons = s.throttledUntil(a)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b GPUPoint) int {
		return cmp.Or(cmp.Compare(a.Instance, b.Instance), cmp.Compare(a.Index, b.Index))
	})
	return out
}

// throttledUntil is the time the clocks were limited, in all and by
// reason, with the last reading's reasons held until To.
func (s *gpuSeries) throttledUntil(a *gpuAcc) (*float64, map[string]float64) {
	d, limits := a.held(*s.last, a.to)
	total, by := addHeld(s.throttle, maps.Clone(s.reasons), d, limits)
	return new(total), by
}

// summarizeGPUs summarises each GPU read in the window (gpuAcc).
func summarizeGPUs(w Window) []GPUPoint {
	a := newGPUAcc(w.From, w.To, w.Scale)
	for i := range w.Samples {
		a.add(&w.Samples[i])
	}
	return a.points()
}

// gaugeAcc is the mean and the extremes of an optional series.
type gaugeAcc struct {
	mean optMean
	ext  optExtremes
}

func (g *gaugeAcc) add(v *float64) {
	g.mean.add(v)
	g.ext.add(v)
}
