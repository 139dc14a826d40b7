package metrics

import (
	"math"
	"slices"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// Curves keeps what a picture of a run needs beyond its summary: each
// point's TTFT and ITL distributions and the run's timeline. Its size is
// bounded whatever the run's length: distributions are kept in log
// buckets (cdfGrowth wide), so a CDF of a million inter-token gaps costs
// a few thousand counters; the timeline keeps one small entry per request
// until it is cut into bins. Exact percentiles come from the summary; a
// curve is for the eye. The zero value is ready to use; records are
// expected in model time (Record.ModelTime), as the summary's are.
type Curves struct {
	points map[int]*pointCurves
	loads  map[int]record.Load
	reqs   []reqSpan
	tel    []telSample
	// fine holds the timeline past timelineExact requests (reqs is then
	// empty): timeline_bins.go.
	fine *fineTimeline
}

// cdfGrowth is the ratio between consecutive bucket bounds: a value is
// drawn within 1% of where it was measured, finer than a chart's pixel.
const cdfGrowth = 1.01

type pointCurves struct {
	load      record.Load
	ttft, itl logHist
}

// reqSpan is one request on the timeline, ns since the run's epoch.
type reqSpan struct {
	sent, first, end int64
	out              int32
	point            int32
	failed           bool
}

// telSample is one telemetry reading on the timeline, in model time.
type telSample struct {
	t      int64
	gpu    int // GPU index, -1 for a server sample
	kv     *float64
	mem    *float64
	powerW *float64
	tempC  *float64
}

// Add folds one record in: a measured request that completed adds to its
// point's distributions (as the summary counts them); every request that
// was not cancelled takes its place on the timeline.
func (c *Curves) Add(r *record.Record) {
	if c.points == nil {
		c.points, c.loads = map[int]*pointCurves{}, map[int]record.Load{}
	}
	c.loads[r.Point] = r.Load
	if r.Error != nil && r.Error.Class == record.ClassCancelled {
		return
	}
	span := reqSpan{sent: r.SentNS, first: r.FirstTokenNS, end: r.EndNS,
		out: int32(r.OutputTokens), point: int32(r.Point), failed: r.Error != nil}
	switch {
	case c.fine != nil:
		c.fine.add(span)
	case len(c.reqs) == timelineExact:
		c.fine = newFineTimeline(append(c.reqs, span))
		c.reqs = nil
	default:
		c.reqs = append(c.reqs, span)
	}
	if r.Phase == record.PhaseWarmup || r.Error != nil {
		return
	}
	p := c.points[r.Point]
	if p == nil {
		p = &pointCurves{load: r.Load}
		c.points[r.Point] = p
	}
	if v, ok := TTFT(r); ok {
		p.ttft.add(v)
	}
	ITL(r.Chunks, p.itl.add)
}

// AddTelemetry keeps the samples the timeline shows: the server's
// KV-cache use and each GPU's memory, power and temperature, scanned in
// time order. Samples are on the records' clock; scale (run.json
// time_scale) puts them in model time beside the records.
func (c *Curves) AddTelemetry(samples telemetry.Scan, scale float64) error {
	if scale <= 0 {
		scale = 1
	}
	return samples(func(s *telemetry.Sample) {
		t := int64(float64(s.TNS) * scale)
		switch {
		case s.Server != nil && s.Server.KVCacheUsage != nil:
			c.tel = append(c.tel, telSample{t: t, gpu: -1, kv: s.Server.KVCacheUsage})
		case s.GPU != nil:
			g := s.GPU
			c.tel = append(c.tel, telSample{t: t, gpu: g.Index, mem: g.MemoryUsedBytes, powerW: g.PowerW, tempC: g.TemperatureC})
		}
	})
}

// Drawn says whether the timeline draws a sample (AddTelemetry): a
// server's KV-cache use, or a GPU's reading.
func Drawn(s *telemetry.Sample) bool {
	return (s.Server != nil && s.Server.KVCacheUsage != nil) || s.GPU != nil
}

// CDF is a distribution drawn as points (value, fraction of samples at or
// below it), at most about maxCDFPoints of them.
type CDF struct {
	X []float64 `json:"x"`
	Y []float64 `json:"y"`
}

// maxCDFPoints bounds a drawn CDF: finer than the eye needs, and a run of
// many points stays small.
const maxCDFPoints = 200

// PointCurves is one load point's distributions.
type PointCurves struct {
	Index int
	Load  record.Load
	TTFT  CDF
	ITL   CDF
	// Counts are the samples behind each curve.
	TTFTCount, ITLCount int64
}

// Points returns each point's distributions, ordered by point index.
func (c *Curves) Points() []PointCurves {
	idx := make([]int, 0, len(c.points))
	for i := range c.points {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]PointCurves, 0, len(idx))
	for _, i := range idx {
		p := c.points[i]
		out = append(out, PointCurves{Index: i, Load: p.load, TTFT: p.ttft.cdf(), ITL: p.itl.cdf(),
			TTFTCount: p.ttft.n, ITLCount: p.itl.n})
	}
	return out
}

// logHist counts values in buckets cdfGrowth wide; values at or below
// zero share one bucket.
type logHist struct {
	counts map[int32]int64
	zero   int64
	n      int64
}

var logGrowth = math.Log(cdfGrowth)

func (h *logHist) add(v float64) {
	h.n++
	if !(v > 0) {
		h.zero++
		return
	}
	if h.counts == nil {
		h.counts = map[int32]int64{}
	}
	h.counts[int32(math.Floor(math.Log(v)/logGrowth))]++
}

// cdf draws the histogram: one point per bucket at its upper bound, but
// a bucket is left out when it adds less than 1/maxCDFPoints to the
// fraction drawn so far, unless it crosses into the tail (p99, p99.9,
// p99.99) or is the last: the tail is what latency is judged by.
func (h *logHist) cdf() CDF {
	out := CDF{X: []float64{}, Y: []float64{}}
	if h.n == 0 {
		return out
	}
	keys := make([]int32, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	n := float64(h.n)
	cum, last := h.zero, 0.0
	if h.zero > 0 {
		last = float64(h.zero) / n
		out.X, out.Y = append(out.X, 0), append(out.Y, last)
	}
	for i, k := range keys {
		cum += h.counts[k]
		f := float64(cum) / n
		if f-last < 1.0/maxCDFPoints && i < len(keys)-1 && !crossesTail(last, f) {
			continue
		}
		out.X = append(out.X, math.Pow(cdfGrowth, float64(k+1)))
		out.Y = append(out.Y, f)
		last = f
	}
	return out
}

func crossesTail(from, to float64) bool {
	for _, q := range [...]float64{0.99, 0.999, 0.9999} {
		if from < q && to >= q {
			return true
		}
	}
	return false
}
