package telemetry

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// DCGM exporter names (NVIDIA dcgm-exporter, etc/default-counters.csv and
// DCGM's field list). Memory is in MiB, energy in mJ, utilisation in %.
const (
	dcgmFBUsed     = "DCGM_FI_DEV_FB_USED"
	dcgmFBFree     = "DCGM_FI_DEV_FB_FREE"
	dcgmFBReserved = "DCGM_FI_DEV_FB_RESERVED"
	dcgmUtil       = "DCGM_FI_DEV_GPU_UTIL"
	dcgmPower      = "DCGM_FI_DEV_POWER_USAGE"
	dcgmEnergy     = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	dcgmTemp       = "DCGM_FI_DEV_GPU_TEMP"
	dcgmSMClock    = "DCGM_FI_DEV_SM_CLOCK"
	dcgmXid        = "DCGM_FI_DEV_XID_ERRORS"
	// Not in the default counters; exported when the user adds it. DCGM
	// 3.3 renamed CLOCK_THROTTLE_REASONS to CLOCKS_EVENT_REASONS.
	dcgmEvents   = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
	dcgmThrottle = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
)

const mib = 1 << 20

// DCGMSource scrapes a DCGM exporter (--gpu-metrics-url): one GPU sample
// per gpu label, Instance "dcgm:URL". Events as for NVML: a change of a
// GPU's last Xid is an xid event, a limiting clock reason becoming active
// a throttle event.
type DCGMSource struct {
	s       *scraper
	lastXid map[int]float64
	limits  map[int][]string // each GPU's limiting clock reasons at its last reading
}

// NewDCGMSource scrapes ep, a DCGM exporter's /metrics.
func NewDCGMSource(ep Endpoint) *DCGMSource {
	return &DCGMSource{s: newScraper(ep), lastXid: map[int]float64{}, limits: map[int][]string{}}
}

// Name implements Source.
func (d *DCGMSource) Name() string { return "DCGM exporter at " + d.s.ep.URL }

// Read implements Source.
func (d *DCGMSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	fams, err := d.s.scrape(ctx)
	if err != nil {
		return nil, err
	}
	inst := "dcgm:" + d.s.ep.URL
	gpus := dcgmGPUs(fams)
	if len(gpus) == 0 {
		return nil, fmt.Errorf("%s: no %s series: not a DCGM exporter, or it sees no GPU", d.s.ep.URL, dcgmFBUsed)
	}
	var out []Sample
	for _, g := range gpus {
		out = append(out, Sample{TNS: now, Source: KindGPU, Instance: inst, GPU: g.gpu})
		for _, ev := range []*Event{d.xidEvent(g, inst), d.throttleEvent(g.gpu, inst)} {
			if ev != nil {
				out = append(out, eventSample(now, ev))
			}
		}
	}
	return out, nil
}

// xidEvent reports a GPU's Xid gauge ("the last Xid error") changing to
// a non-zero value. The first reading is not reported: its Xid may date
// from long before the run.
func (d *DCGMSource) xidEvent(g dcgmGPU, inst string) *Event {
	if g.xid == nil {
		return nil
	}
	prev, seen := d.lastXid[g.gpu.Index]
	d.lastXid[g.gpu.Index] = *g.xid
	if !seen || *g.xid == prev || *g.xid <= 0 || *g.xid >= 1<<32 {
		return nil
	}
	return xidEvent(inst, g.gpu.Index, uint64(*g.xid))
}

// throttleEvent reports limiting clock reasons that became active since
// the GPU's last reading (NVML's rule, nvmlSource.throttleEvent).
func (d *DCGMSource) throttleEvent(g *GPU, inst string) *Event {
	if g.Throttle == nil {
		return nil // the exporter does not export the reasons
	}
	began := throttleBegins(d.limits[g.Index], g.Throttle)
	d.limits[g.Index] = limitingReasons(g.Throttle)
	if len(began) == 0 {
		return nil
	}
	return &Event{Kind: EventThrottle, Source: inst,
		Detail: fmt.Sprintf("GPU %d: %s", g.Index, strings.Join(began, ", "))}
}

type dcgmGPU struct {
	gpu *GPU
	xid *float64
}

// dcgmGPUs reads every GPU of a DCGM scrape, by index.
func dcgmGPUs(fams map[string]*dto.MetricFamily) []dcgmGPU {
	byIdx := map[int]*dcgmGPU{}
	get := func(m *dto.Metric) *dcgmGPU {
		i, err := strconv.Atoi(label(m, "gpu"))
		if err != nil {
			return nil
		}
		if byIdx[i] == nil {
			byIdx[i] = &dcgmGPU{gpu: &GPU{Index: i, Name: label(m, "modelName"), UUID: label(m, "UUID"), Driver: label(m, "DCGM_FI_DRIVER_VERSION")}}
		}
		return byIdx[i]
	}
	each := func(name string, set func(g *dcgmGPU, v float64)) {
		if f := fams[name]; f != nil {
			for _, m := range f.GetMetric() {
				if v, ok := value(m); ok {
					if g := get(m); g != nil {
						set(g, v)
					}
				}
			}
		}
	}
	each(dcgmFBUsed, func(g *dcgmGPU, v float64) { g.gpu.MemoryUsedBytes = num(v * mib) })
	each(dcgmUtil, func(g *dcgmGPU, v float64) { g.gpu.Utilization = num(v / 100) })
	each(dcgmPower, func(g *dcgmGPU, v float64) { g.gpu.PowerW = num(v) })
	each(dcgmEnergy, func(g *dcgmGPU, v float64) { g.gpu.EnergyJ = num(v / 1000) })
	each(dcgmTemp, func(g *dcgmGPU, v float64) { g.gpu.TemperatureC = num(v) })
	each(dcgmSMClock, func(g *dcgmGPU, v float64) { g.gpu.SMClockMHz = num(v) })
	each(dcgmXid, func(g *dcgmGPU, v float64) { g.xid = num(v) })
	dcgmTotals(fams, each)
	dcgmThrottleReasons(fams, each)
	out := make([]dcgmGPU, 0, len(byIdx))
	for _, g := range byIdx {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gpu.Index < out[j].gpu.Index })
	return out
}

// dcgmTotals sets memory total = used + free (+ reserved, where exported).
func dcgmTotals(fams map[string]*dto.MetricFamily, each func(string, func(*dcgmGPU, float64))) {
	free := map[*dcgmGPU]float64{}
	each(dcgmFBFree, func(g *dcgmGPU, v float64) { free[g] += v })
	each(dcgmFBReserved, func(g *dcgmGPU, v float64) { free[g] += v })
	for g, f := range free {
		if g.gpu.MemoryUsedBytes != nil {
			g.gpu.MemoryTotalBytes = num(*g.gpu.MemoryUsedBytes + f*mib)
		}
	}
}

// dcgmThrottleReasons decodes the clock event bitmask, under either name.
func dcgmThrottleReasons(fams map[string]*dto.MetricFamily, each func(string, func(*dcgmGPU, float64))) {
	name := dcgmEvents
	if fams[name] == nil {
		name = dcgmThrottle
	}
	each(name, func(g *dcgmGPU, v float64) {
		if v >= 0 && v < 1<<53 {
			g.gpu.Throttle = clockReasonNames(uint64(v))
		}
	})
}

// num is v, or nil when JSON cannot hold it (a conversion or a sum of
// huge values overflowed): absent, never a broken line.
func num(v float64) *float64 {
	if !finite(v) {
		return nil
	}
	return &v
}
