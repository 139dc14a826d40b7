package metrics

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

// SliceTelemetry is what the telemetry sampled during a slice says about
// the GPUs and the server (points[].slices[].telemetry); a figure no
// source gave is absent.
type SliceTelemetry struct {
	// GPUTemperatureCMax is the hottest reading of any GPU.
	GPUTemperatureCMax *float64 `json:"gpu_temperature_c_max,omitempty"`
	// GPUPowerWMean is the GPUs' mean draw, summed over GPUs.
	GPUPowerWMean *float64 `json:"gpu_power_w_mean,omitempty"`
	// GPUThrottleS is the longest any one GPU's clocks were throttled
	// (model-time seconds).
	GPUThrottleS    *float64 `json:"gpu_throttle_s,omitempty"`
	KVCacheUsageMax *float64 `json:"kv_cache_usage_max,omitempty"`
}

// sliceTelemetry reduces a telemetry summary to a slice's figures; nil
// when it has none of them.
func sliceTelemetry(p *telemetry.Point) *SliceTelemetry {
	if p == nil {
		return nil
	}
	var t SliceTelemetry
	for _, g := range p.GPUs {
		t.GPUTemperatureCMax = maxOf(t.GPUTemperatureCMax, g.TemperatureCMax)
		t.GPUThrottleS = maxOf(t.GPUThrottleS, g.ThrottleS)
		if g.PowerWMean != nil {
			t.GPUPowerWMean = ptr(deref(t.GPUPowerWMean) + *g.PowerWMean)
		}
	}
	if p.Server != nil && p.Server.KVCacheUsage != nil {
		t.KVCacheUsageMax = ptr(p.Server.KVCacheUsage.Max)
	}
	if t == (SliceTelemetry{}) {
		return nil
	}
	return &t
}

func ptr(v float64) *float64 { return &v }

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func maxOf(a, b *float64) *float64 {
	if b == nil || (a != nil && *a >= *b) {
		return a
	}
	return ptr(*b)
}

// AddSliceTelemetry gives every slice the telemetry of its span and
// judges each point's drift again with it. tel summarises the samples of
// a point over [from, to), model-time ns on the records' clock (the
// caller converts to the run clock), and returns nil when none was taken.
func (s *Summary) AddSliceTelemetry(tel func(point int, from, to int64) *telemetry.Point) {
	for i := range s.Points {
		p := &s.Points[i]
		if len(p.Slices) == 0 {
			continue
		}
		for k := range p.Slices {
			from, to := p.Slices[k].Span()
			p.Slices[k].Telemetry = sliceTelemetry(tel(p.Index, from, to))
		}
		old := p.Drift.Warning()
		p.Drift = DriftOf(p.Slices)
		p.Warnings = replaceWarning(p.Warnings, old, p.Drift.Warning())
	}
}

// replaceWarning swaps old for repl in ws (appending repl when old is
// absent, dropping old when repl is empty).
func replaceWarning(ws []string, old, repl string) []string {
	out := ws[:0:0]
	for _, w := range ws {
		if old == "" || w != old {
			out = append(out, w)
		}
	}
	if repl != "" {
		out = append(out, repl)
	}
	return out
}

// Coincidence is what the GPU telemetry shows beside the steady slices'
// throughput: throttling, and how throughput moved with temperature, power
// and throttle time across the slices. It reports association only.
type Coincidence struct {
	// Slices is how many steady slices had GPU telemetry.
	Slices          int     `json:"slices"`
	ThrottledSlices int     `json:"throttled_slices"`
	ThrottleS       float64 `json:"throttle_s"`
	// Pearson's r of the slices' aggregate throughput with each series,
	// absent when the series did not vary.
	Temperature *Corr  `json:"r_temperature,omitempty"`
	Power       *Corr  `json:"r_power,omitempty"`
	Throttle    *Corr  `json:"r_throttle,omitempty"`
	Text        string `json:"text"`
}

// Corr is a correlation over slices with its two-sided test at 95%.
type Corr struct {
	N           int     `json:"n"`
	R           float64 `json:"r"`
	Significant bool    `json:"significant"`
}

// coincidence gathers the steady slices' GPU telemetry; nil when none of
// them has any.
func coincidence(ss []Slice) *Coincidence {
	c := &Coincidence{}
	series := map[string]*[2][]float64{}
	add := func(name string, v *float64, tps float64) {
		if v == nil {
			return
		}
		if series[name] == nil {
			series[name] = &[2][]float64{}
		}
		series[name][0] = append(series[name][0], tps)
		series[name][1] = append(series[name][1], *v)
	}
	for i := range ss {
		s := &ss[i]
		tl := s.Telemetry
		if s.Phase != PhaseSteady || tl == nil || (tl.GPUTemperatureCMax == nil && tl.GPUPowerWMean == nil && tl.GPUThrottleS == nil) {
			continue
		}
		c.Slices++
		if th := deref(tl.GPUThrottleS); th > 0 {
			c.ThrottledSlices++
			c.ThrottleS += th
		}
		add("temperature", tl.GPUTemperatureCMax, s.OutputTPS)
		add("power", tl.GPUPowerWMean, s.OutputTPS)
		add("throttle", tl.GPUThrottleS, s.OutputTPS)
	}
	if c.Slices == 0 {
		return nil
	}
	c.Temperature, c.Power, c.Throttle = corr(series["temperature"]), corr(series["power"]), corr(series["throttle"])
	c.Text = c.text()
	return c
}

func corr(xy *[2][]float64) *Corr {
	if xy == nil {
		return nil
	}
	r, ok := stats.Correlate(xy[0], xy[1])
	if !ok {
		return nil
	}
	return &Corr{N: r.N, R: r.R, Significant: r.Significant}
}

// text says what the telemetry shows, and no more: throttling seen or
// not, and each correlation with its sign and whether it is significant.
func (c *Coincidence) text() string {
	parts := []string{fmt.Sprintf("no GPU throttling in the %d steady slices with GPU telemetry", c.Slices)}
	if c.ThrottledSlices > 0 {
		parts[0] = fmt.Sprintf("GPU clocks throttled in %d of %d steady slices (%.0f s in all)", c.ThrottledSlices, c.Slices, c.ThrottleS)
	}
	for _, x := range []struct {
		name string
		c    *Corr
	}{{"GPU temperature", c.Temperature}, {"GPU power", c.Power}, {"throttle time", c.Throttle}} {
		if x.c == nil {
			continue
		}
		sig := "not significant"
		if x.c.Significant {
			sig = "significant at 95%"
		}
		parts = append(parts, fmt.Sprintf("throughput vs %s r = %+.2f (%s, %d slices)", x.name, x.c.R, sig, x.c.N))
	}
	return strings.Join(parts, "; ")
}
