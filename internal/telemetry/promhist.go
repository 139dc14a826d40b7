package telemetry

import "math"

// histDelta is cur − prev bucket by bucket, over the bounds both have. A
// count that went down means the server restarted between the two
// readings: everything cur holds was observed since, so cur is the delta.
func histDelta(prev, cur *Histogram) *Histogram {
	if prev == nil {
		return nil
	}
	if histBelow(cur, prev) {
		return cur
	}
	had := map[float64]float64{}
	for _, b := range prev.Buckets {
		had[b.LE] = b.Count
	}
	d := &Histogram{Count: cur.Count - prev.Count, Sum: cur.Sum - prev.Sum}
	for _, b := range cur.Buckets {
		if c, ok := had[b.LE]; ok {
			d.Buckets = append(d.Buckets, Bucket{LE: b.LE, Count: b.Count - c})
		}
	}
	return d
}

// addHist adds d to acc in place (acc nil: a copy of d), over the bounds
// both have.
func addHist(acc, d *Histogram) *Histogram {
	if d == nil {
		return acc
	}
	if acc == nil {
		c := *d
		c.Buckets = append([]Bucket(nil), d.Buckets...)
		return &c
	}
	return sumHistograms([]*Histogram{acc, d})
}

// counterDelta is cur − prev, or cur when the counter went backwards (a
// restart: all of cur was counted since).
func counterDelta(prev, cur float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// histQuantile is the q-quantile of a histogram of deltas, as Prometheus'
// histogram_quantile computes it: the bucket holding rank q·Count, with
// linear interpolation inside it (the first bucket's lower bound is 0).
// lo, hi bound that bucket; hi is +Inf for the unbounded last bucket, in
// which case the quantile is its lower bound, the largest finite bound.
func histQuantile(h *Histogram, q float64) (v, lo, hi float64) {
	rank := q * h.Count
	prevLE, prevCount := 0.0, 0.0
	for _, b := range h.Buckets {
		// Counts are cumulative; a float slip must not make them fall.
		c := math.Max(b.Count, prevCount)
		if c >= rank && c > 0 {
			if c == prevCount {
				return b.LE, prevLE, b.LE
			}
			return prevLE + (b.LE-prevLE)*(rank-prevCount)/(c-prevCount), prevLE, b.LE
		}
		prevLE, prevCount = b.LE, c
	}
	return prevLE, prevLE, math.Inf(1)
}

// quantiles are p50, p90 and p99 of a delta histogram in model-time ms
// (seconds on the run clock × scale × 1000), with the bucket of each; nil
// when nothing was observed. See markovCap for the one departure from
// histogram_quantile.
func quantiles(h *Histogram, scale float64) *Quantiles {
	if h == nil || !(h.Count > 0) || len(h.Buckets) == 0 {
		return nil
	}
	ms := scale * 1000
	out := &Quantiles{Count: h.Count, Bucket: map[string][]float64{}}
	for _, p := range []struct {
		key string
		q   float64
		dst *float64
	}{{"p50", 0.50, &out.P50}, {"p90", 0.90, &out.P90}, {"p99", 0.99, &out.P99}} {
		v, lo, hi := histQuantile(h, p.q)
		*p.dst = markovCap(v, lo, h, p.q) * ms
		if math.IsInf(hi, 1) {
			out.Bucket[p.key] = []float64{lo * ms}
		} else {
			out.Bucket[p.key] = []float64{lo * ms, hi * ms}
		}
	}
	for _, v := range []float64{out.Count, out.P50, out.P90, out.P99, out.Bucket["p50"][0], out.Bucket["p99"][0]} {
		if !finite(v) {
			return nil
		}
	}
	return out
}

// markovCap bounds the interpolated q-quantile v of durations (never
// negative) by Markov's inequality: at most a share 1−q of them can exceed
// mean/(1−q), the mean being Sum/Count of the same observations. Linear
// interpolation assumes observations spread evenly over their bucket; an
// engine's queue times are mostly near zero, inside a first bucket 0.3 s
// wide (vLLM), where interpolation alone would report a median of 150 ms.
// The cap never moves a figure below its bucket's lower bound.
func markovCap(v, lo float64, h *Histogram, q float64) float64 {
	if h.Sum < 0 || q >= 1 {
		return v
	}
	return max(lo, min(v, h.Sum/h.Count/(1-q)))
}
