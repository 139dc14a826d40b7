package metrics

import (
	"math"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

const sec = int64(1e9)

// curveRec is a completed request of point 0 (c=2): sent at sent s, first
// token ttft ms later, then one token per chunk every itl ms.
func curveRec(id int64, sent float64, ttft, itl float64, tokens int) *record.Record {
	s := int64(sent * 1e9)
	r := &record.Record{ID: id, Point: 0, Load: record.Load{Concurrency: 2}, Phase: record.PhaseMeasured,
		SentNS: s, FirstTokenNS: s + int64(ttft*1e6), OutputTokens: tokens}
	for i := range tokens {
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: int64(ttft*1e6) + int64(float64(i)*itl*1e6), Tokens: 1})
	}
	r.EndNS = s + r.Chunks[len(r.Chunks)-1].AtNS
	return r
}

// inBucket says whether a drawn bucket bound x stands for v: at or above it,
// within one bucket.
func inBucket(x, v float64) bool { return x >= v && x <= v*cdfGrowth*1.0001 }

func TestCurvesCDF(t *testing.T) {
	var c Curves
	c.Add(curveRec(1, 0, 100, 10, 3))
	c.Add(curveRec(2, 0, 200, 10, 3))
	c.Add(curveRec(3, 0, 300, 20, 3))
	// none of these is in a distribution: a failure, a warm-up, a cancel
	failed := curveRec(4, 0, 5, 1, 2)
	failed.Error = &record.Error{Class: record.ClassHTTP5xx}
	warm := curveRec(5, 0, 5, 1, 2)
	warm.Phase = record.PhaseWarmup
	cancelled := curveRec(6, 0, 5, 1, 2)
	cancelled.Error = &record.Error{Class: record.ClassCancelled}
	for _, r := range []*record.Record{failed, warm, cancelled} {
		c.Add(r)
	}
	ps := c.Points()
	if len(ps) != 1 {
		t.Fatalf("got %d points, want 1", len(ps))
	}
	p := ps[0]
	if p.Index != 0 || p.Load != (record.Load{Concurrency: 2}) || p.TTFTCount != 3 || p.ITLCount != 6 {
		t.Fatalf("point %d %v, %d TTFT and %d ITL samples; want 0 c=2, 3 and 6", p.Index, p.Load, p.TTFTCount, p.ITLCount)
	}
	wantTTFT := [][2]float64{{100, 1.0 / 3}, {200, 2.0 / 3}, {300, 1}}
	if len(p.TTFT.X) != 3 {
		t.Fatalf("TTFT CDF %v, want 3 points", p.TTFT)
	}
	for i, w := range wantTTFT {
		if !inBucket(p.TTFT.X[i], w[0]) || math.Abs(p.TTFT.Y[i]-w[1]) > 1e-12 {
			t.Errorf("TTFT CDF point %d = (%g, %g), want (%g, %g)", i, p.TTFT.X[i], p.TTFT.Y[i], w[0], w[1])
		}
	}
	// ITL: four gaps of 10 ms, two of 20 ms
	if len(p.ITL.X) != 2 || !inBucket(p.ITL.X[0], 10) || p.ITL.Y[0] != 4.0/6 || !inBucket(p.ITL.X[1], 20) || p.ITL.Y[1] != 1 {
		t.Errorf("ITL CDF %v, want (10, 2/3) and (20, 1)", p.ITL)
	}
}

// TestCDFDownsampled: a distribution of many distinct values is drawn in
// at most about maxCDFPoints points, its tail quantiles and maximum kept.
func TestCDFDownsampled(t *testing.T) {
	var h logHist
	const n = 100000
	for i := 1; i <= n; i++ {
		h.add(float64(i) / 10) // 0.1 .. 10000 ms, uniform
	}
	h.add(0) // a zero gap: its own point at x = 0
	cdf := h.cdf()
	if len(cdf.X) > maxCDFPoints+5 || len(cdf.X) < maxCDFPoints/2 {
		t.Fatalf("%d points drawn, want about %d", len(cdf.X), maxCDFPoints)
	}
	if cdf.X[0] != 0 || cdf.Y[0] != 1.0/(n+1) {
		t.Errorf("first point (%g, %g), want the zero bucket (0, %g)", cdf.X[0], cdf.Y[0], 1.0/(n+1))
	}
	last := len(cdf.X) - 1
	if cdf.Y[last] != 1 || !inBucket(cdf.X[last], 10000) {
		t.Errorf("last point (%g, %g), want (10000, 1)", cdf.X[last], cdf.Y[last])
	}
	for _, q := range []float64{0.99, 0.999, 0.9999} {
		// the first point at or past q lies within one bucket of q's value
		for i, y := range cdf.Y {
			if y >= q {
				if v := q * 10000; cdf.X[i] > v*cdfGrowth*cdfGrowth {
					t.Errorf("first point past %g at x=%g, want within a bucket of %g", q, cdf.X[i], v)
				}
				break
			}
		}
	}
	for i := 1; i < len(cdf.X); i++ {
		if cdf.X[i] <= cdf.X[i-1] || cdf.Y[i] <= cdf.Y[i-1] {
			t.Fatalf("not increasing at %d: %v", i, cdf)
		}
	}
}

func f64(v float64) *float64 { return &v }

func TestCurvesTimeline(t *testing.T) {
	var c Curves
	// 0–4 s: a request sent at 0, first token at 1 s, 30 tokens to 4 s
	ok := &record.Record{Point: 0, Load: record.Load{Concurrency: 1}, Phase: record.PhaseMeasured,
		SentNS: 0, FirstTokenNS: 1 * sec, EndNS: 4 * sec, OutputTokens: 30}
	// point 1 (c=2): a failure from 2 s to 3.5 s
	bad := &record.Record{Point: 1, Load: record.Load{Concurrency: 2}, Phase: record.PhaseMeasured,
		SentNS: 2 * sec, EndNS: 3*sec + sec/2, Error: &record.Error{Class: record.ClassHTTP5xx}}
	c.Add(ok)
	c.Add(bad)
	// on the records' clock at scale 2: 0.75 s is 1.5 s of model time
	c.AddTelemetry(telemetry.SliceScan([]telemetry.Sample{
		{TNS: 750_000_000, Source: telemetry.KindServer, Server: &telemetry.Server{KVCacheUsage: f64(0.5)}},
		{TNS: 750_000_000, Source: telemetry.KindGPU, GPU: &telemetry.GPU{Index: 0, MemoryUsedBytes: f64(1 << 30), PowerW: f64(100), TemperatureC: f64(60)}},
		{TNS: 800_000_000, Source: telemetry.KindGPU, GPU: &telemetry.GPU{Index: 1, MemoryUsedBytes: f64(2 << 30), PowerW: f64(200), TemperatureC: f64(70)}},
		{TNS: 900_000_000, Source: telemetry.KindGPU, GPU: &telemetry.GPU{Index: 1, MemoryUsedBytes: f64(4 << 30), PowerW: f64(300), TemperatureC: f64(80)}},
		{TNS: 1, Source: telemetry.KindHost, Host: &telemetry.Host{}}, // not drawn
	}), 2)
	tl := c.Timeline(4) // 0 .. 4 s in four bins of 1 s (and one ns)
	if tl.StartS != 0 || math.Abs(tl.BinS-1) > 1e-8 || len(tl.T) != 4 {
		t.Fatalf("start %g, bin %g s, %d bins; want 0, 1, 4", tl.StartS, tl.BinS, len(tl.T))
	}
	near := func(got, want []float64, what string) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6 {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
		}
	}
	near(tl.T, []float64{0, 1, 2, 3}, "t")
	near(tl.OutputTPS, []float64{0, 10, 10, 10}, "output tok/s")
	near(tl.Running, []float64{1, 1, 2, 1.5}, "running")
	near(tl.Errors, []float64{0, 0, 0, 1}, "errors")
	opt := func(got []*float64, bin int, want float64, what string) {
		t.Helper()
		for i, v := range got {
			switch {
			case i == bin && (v == nil || math.Abs(*v-want) > 1e-9):
				t.Errorf("%s bin %d = %v, want %g", what, i, v, want)
			case i != bin && v != nil:
				t.Errorf("%s bin %d = %g, want none", what, i, *v)
			}
		}
	}
	opt(tl.KVCachePct, 1, 50, "KV cache %")
	opt(tl.VRAMGiB, 1, 1+3, "VRAM GiB") // GPU 0's 1, GPU 1's mean of 2 and 4
	opt(tl.PowerW, 1, 100+250, "power W")
	opt(tl.TempC, 1, 75, "temperature") // the hottest GPU's mean
	want := []TimelineSpan{{Index: 0, Label: "c=1", FromS: 0, ToS: 4}, {Index: 1, Label: "c=2", FromS: 2, ToS: 3.5}}
	if len(tl.Spans) != 2 || tl.Spans[0] != want[0] || tl.Spans[1] != want[1] {
		t.Errorf("spans %+v, want %+v", tl.Spans, want)
	}
}

func TestTimelineEmpty(t *testing.T) {
	var c Curves
	tl := c.Timeline(100)
	if len(tl.T) != 0 || tl.OutputTPS == nil || tl.Spans == nil || len(c.Points()) != 0 {
		t.Errorf("empty curves: %+v, want empty, non-nil series", tl)
	}
}
