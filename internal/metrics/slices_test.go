package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// openLoop puts r in an open loop at 10 req/s.
func openLoop(r *record.Record) *record.Record {
	r.Load = record.Load{Rate: 10}
	return r
}

// TestSlicesFromScriptedRecords cuts a scripted open-loop point into
// 100 ms slices whose every figure is worked out by hand below.
func TestSlicesFromScriptedRecords(t *testing.T) {
	a := Aggregator{Slice: 100 * time.Millisecond}
	// A: sent 0, one token at 50, 150 and 250 ms; ends 250, TPOT 100 ms.
	a.Add(openLoop(req(1, 0, 0, 50, 100, 1, 1, 1)))
	// B: sent 20, 2 tokens at 150, 3 at 170; ends 170: 3 tokens after the
	// first chunk in 20 ms, 150 tok/s.
	a.Add(openLoop(req(2, 0, 20, 130, 20, 2, 3)))
	// C: sent 30, fails at 120.
	a.Add(openLoop(&record.Record{ID: 3, Phase: record.PhaseMeasured, SentNS: 30 * msNS, EndNS: 120 * msNS,
		Error: &record.Error{Class: record.ClassHTTP5xx}}))
	// D: sent 210, one token at 250 and 290; ends 290, TPOT 40 ms.
	a.Add(openLoop(req(4, 0, 210, 40, 40, 1, 1)))
	// A warm-up request is no part of the window.
	w := openLoop(req(5, 0, 0, 10, 10, 7))
	w.Phase = record.PhaseWarmup
	a.Add(w)

	p := a.Points()[0]
	// The window is [0, 290]: two full slices and a 90 ms one, which is
	// the drain. In flight: A, B (from 20) and C (from 30) fill slice 0
	// (250 ms of 100); slice 1 has A's 100, B's 70, C's 20.
	want := []struct {
		start, end            float64
		phase                 string
		completed, errors     int
		tokens                int
		tps, inFlight         float64
		ttftN                 int
		ttft50, ttft95, dec50 float64 // -1: none
	}{
		{0, 0.1, PhaseSteady, 0, 0, 1, 10, 2.5, 1, 50, 50, -1},
		{0.1, 0.2, PhaseSteady, 1, 1, 6, 60, 1.9, 1, 130, 130, 150},
		{0.2, 0.29, PhaseDrain, 2, 0, 3, 3 / 0.09, 130.0 / 90, 1, 40, 40, 17.5},
	}
	if len(p.Slices) != len(want) {
		t.Fatalf("%d slices, want %d: %+v", len(p.Slices), len(want), p.Slices)
	}
	for i, w := range want {
		s := p.Slices[i]
		if s.Index != i || s.Phase != w.phase || s.Completed != w.completed || s.Errors != w.errors || s.OutputTokens != w.tokens || s.TTFTCount != w.ttftN {
			t.Errorf("slice %d: %+v, want %+v", i, s, w)
		}
		near(t, "start", s.StartS, w.start)
		near(t, "end", s.EndS, w.end)
		near(t, "output tps", s.OutputTPS, w.tps)
		near(t, "in flight", s.InFlightMean, w.inFlight)
		near(t, "ttft p50", deref(s.TTFTP50), w.ttft50)
		near(t, "ttft p95", deref(s.TTFTP95), w.ttft95)
		if w.dec50 < 0 != (s.DecodeP50 == nil) || (w.dec50 >= 0 && !approx(*s.DecodeP50, w.dec50)) {
			t.Errorf("slice %d: decode p50 %v, want %v", i, s.DecodeP50, w.dec50)
		}
	}
	// The slices' tokens are the point's, exactly.
	near(t, "tokens over the window", p.Slices[0].OutputTPS*0.1+p.Slices[1].OutputTPS*0.1+p.Slices[2].OutputTPS*0.09, p.OutputTPS*p.DurationS)
	if p.Drift == nil || p.Drift.Judged || p.Drift.Slices != 2 || !strings.Contains(p.Drift.Text, "3 needed") {
		t.Errorf("two steady slices cannot be judged: %+v", p.Drift)
	}
}

func approx(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestNoSlicesByDefault: an aggregator without a slice length keeps no
// chunks and reports neither slices nor drift.
func TestNoSlicesByDefault(t *testing.T) {
	var a Aggregator
	a.Add(req(1, 0, 0, 50, 100, 1, 1, 1))
	p := a.Points()[0]
	if p.Slices != nil || p.Drift != nil || a.points[0].sliceReqs != nil {
		t.Errorf("slices %v drift %v kept %d", p.Slices, p.Drift, len(a.points[0].sliceReqs))
	}
}

// TestWarmupIsTheRamp: an open loop sending every 0.5 s requests that
// last 4 s ramps from 1.5 to 8 in flight over its first seconds; the
// slices below 90% of the steady 8 are warm-up (1.5, 3.5, 5.5), the one
// at 7.5 is not, and the slices after the last send are the drain.
func TestWarmupIsTheRamp(t *testing.T) {
	a := Aggregator{Slice: time.Second}
	for i := range int64(41) {
		sent := i * 500
		a.Add(openLoop(req(i+1, sent, sent, 100, 390, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)))
	}
	p := a.Points()[0]
	var phases []string
	for _, s := range p.Slices {
		phases = append(phases, s.Phase[:1])
	}
	// 24 slices: [0,1) … [23,24); the last send is at 20 s.
	if got, want := strings.Join(phases, ""), "wwwsssssssssssssssssdddd"; got != want {
		t.Errorf("phases %s, want %s", got, want)
	}
	near(t, "slice 0 in flight", p.Slices[0].InFlightMean, 1.5)
	near(t, "slice 3 in flight", p.Slices[3].InFlightMean, 7.5)
	if p.Drift.WarmupSlices != 3 || p.Drift.Slices != 17 {
		t.Errorf("drift over %d slices after %d warm-up, want 17 after 3", p.Drift.Slices, p.Drift.WarmupSlices)
	}
}

// closedLoop scripts users that send back to back for dur ms: each request
// has a 20 ms TTFT then n one-token chunks, the gap between them
// gap(t) ms for a request sent at t.
func closedLoop(users int, dur, n int64, gap func(t int64) int64) *Aggregator {
	a := &Aggregator{Slice: 5 * time.Second}
	id := int64(0)
	for u := 0; u < users; u++ {
		for t := int64(u); t < dur; {
			id++
			toks := make([]int, n)
			for i := range toks {
				toks[i] = 1
			}
			r := req(id, t, t, 20, gap(t), toks...)
			a.Add(r)
			t = r.EndNS / msNS
		}
	}
	return a
}

// TestDriftFallingThroughput: throughput falling linearly by 30% over a
// minute is a significant negative slope and a drift warning.
func TestDriftFallingThroughput(t *testing.T) {
	// per-user speed 100 → 70 tok/s: the gap grows as 1/(1 − 0.3·t/60 s)
	a := closedLoop(4, 60000, 20, func(t int64) int64 { return int64(10 / (1 - 0.3*float64(t)/60000)) })
	p := a.Points()[0]
	d := p.Drift
	if d == nil || !d.Judged || !d.Detected || d.OutputTPS == nil {
		t.Fatalf("drift %+v", d)
	}
	// The users all start at once: the slice in which their first
	// requests run is warm-up, though all four are in flight.
	if p.Slices[0].Phase != PhaseWarmup || p.Slices[1].Phase != PhaseSteady || d.WarmupSlices != 1 || d.Slices != 11 {
		t.Errorf("phases %s %s, %d warm-up, %d steady; want the first round alone as warm-up", p.Slices[0].Phase, p.Slices[1].Phase, d.WarmupSlices, d.Slices)
	}
	// Warm-up requests, one per user, took the first round: no slice of
	// the measured window is warm-up.
	for u := range int64(4) {
		w := req(1000+u, 0, 0, 20, 10, 1)
		w.Phase = record.PhaseWarmup
		a.Add(w)
	}
	if p := a.Points()[0]; p.Slices[0].Phase != PhaseSteady || p.Drift.WarmupSlices != 0 {
		t.Errorf("after warm-up requests: slice 0 %s, %d warm-up slices; want none", p.Slices[0].Phase, p.Drift.WarmupSlices)
	}
	tr := d.OutputTPS
	if !tr.Drift || tr.SlopePerH >= 0 || tr.SlopePerHCI[1] >= 0 || tr.Change > -0.2 || tr.Change < -0.35 {
		t.Errorf("throughput trend %+v: want a significant fall of about 25–30%%", tr)
	}
	var warned bool
	for _, w := range p.Warnings {
		warned = warned || (strings.HasPrefix(w, DriftWarningPrefix) && strings.Contains(w, "aggregate throughput fell by") && strings.Contains(w, "no GPU telemetry"))
	}
	if !warned {
		t.Errorf("no drift warning: %q", p.Warnings)
	}
}

// TestNoDriftWhenFlat: the same loop at a steady speed with ±30% noise in
// every request's gap is no drift, and no warning.
func TestNoDriftWhenFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := closedLoop(4, 60000, 20, func(int64) int64 { return 7 + rng.Int64N(7) })
	p := a.Points()[0]
	d := p.Drift
	if d == nil || !d.Judged || d.Detected || d.OutputTPS == nil || d.OutputTPS.Drift || d.TTFTP95 == nil {
		t.Fatalf("drift %+v", d)
	}
	if lo, hi := d.OutputTPS.SlopePerHCI[0], d.OutputTPS.SlopePerHCI[1]; (lo > 0 || hi < 0) && d.OutputTPS.Material {
		t.Errorf("flat run: interval [%v, %v] and material", lo, hi)
	}
	for _, w := range p.Warnings {
		if strings.HasPrefix(w, DriftWarningPrefix) {
			t.Errorf("warning on a flat run: %s", w)
		}
	}
}

// TestDriftCoincidesWithThrottling: the falling run with GPU telemetry in
// which the temperature climbs and the clocks throttle in the second half
// says so, with the signs of the correlations; a run whose GPU stays
// constant says there was no throttling and gives no correlation.
func TestDriftCoincidesWithThrottling(t *testing.T) {
	a := closedLoop(4, 60000, 20, func(t int64) int64 { return int64(10 / (1 - 0.3*float64(t)/60000)) })
	s := Summarize(nil, a)
	s.AddSliceTelemetry(func(point int, from, to int64) *telemetry.Point {
		sec := float64(from) / 1e9
		temp, power, throttle := 60+sec/2, 300-sec, 0.0
		if sec >= 30 {
			throttle = 2
		}
		return &telemetry.Point{GPUs: []telemetry.GPUPoint{{TemperatureCMax: &temp, PowerWMean: &power, ThrottleS: &throttle}}}
	})
	d := s.Points[0].Drift
	c := d.Coincidence
	if c == nil || c.Slices != d.Slices || c.ThrottledSlices != 6 || c.ThrottleS != 12 || c.Slices != 11 {
		t.Fatalf("coincidence %+v over %d slices", c, d.Slices)
	}
	// Throughput falls as the temperature rises and the power falls.
	if c.Temperature == nil || c.Temperature.R > -0.9 || !c.Temperature.Significant || c.Power == nil || c.Power.R < 0.9 || c.Throttle == nil || c.Throttle.R > 0 {
		t.Errorf("correlations: temperature %+v power %+v throttle %+v", c.Temperature, c.Power, c.Throttle)
	}
	w := strings.Join(s.Points[0].Warnings, "\n")
	if strings.Count(w, DriftWarningPrefix) != 1 || !strings.Contains(w, "GPU clocks throttled in 6 of 11 steady slices (12 s in all)") ||
		!strings.Contains(w, "throughput vs GPU temperature r = -") || strings.Contains(w, "no GPU telemetry") {
		t.Errorf("the warning does not give the evidence, once:\n%s", w)
	}
	if s.Points[0].Slices[0].Telemetry == nil || *s.Points[0].Slices[0].Telemetry.GPUTemperatureCMax != 60 {
		t.Errorf("slice 0 telemetry %+v", s.Points[0].Slices[0].Telemetry)
	}

	s.AddSliceTelemetry(func(int, int64, int64) *telemetry.Point {
		temp, zero := 70.0, 0.0
		return &telemetry.Point{GPUs: []telemetry.GPUPoint{{TemperatureCMax: &temp, ThrottleS: &zero}}}
	})
	c = s.Points[0].Drift.Coincidence
	if c == nil || c.ThrottledSlices != 0 || c.Temperature != nil || !strings.Contains(c.Text, "no GPU throttling in the 11 steady slices") {
		t.Errorf("steady GPU: %+v", c)
	}
}

// steadySlices builds one-minute slices with the given throughputs and
// p95 TTFTs, all steady.
func steadySlices(tps, p95 []float64) []Slice {
	ss := make([]Slice, len(tps))
	for i := range ss {
		v := p95[i]
		ss[i] = Slice{Index: i, StartS: float64(60 * i), EndS: float64(60 * (i + 1)), Phase: PhaseSteady, OutputTPS: tps[i], TTFTP95: &v}
	}
	return ss
}

func TestDriftOf(t *testing.T) {
	flat := []float64{100, 100, 100, 100, 100, 100}
	tests := []struct {
		name         string
		slices       []Slice
		judged, tpsD bool
		ttftD        bool
		text         string
	}{
		// 2% down in five minutes, no noise: significant, not material
		{"small fall", steadySlices([]float64{101, 100.6, 100.2, 99.8, 99.4, 99}, flat), true, false, false, "significant but under 5%: no drift"},
		// 10% down: drift
		{"fall", steadySlices([]float64{105, 103, 101, 99, 97, 95}, flat), true, true, false, "aggregate throughput fell by 10.0% of its mean over 5 min (-120%/h"},
		// p95 TTFT climbing with noise while throughput holds
		{"ttft climbs", steadySlices(flat, []float64{200, 230, 250, 290, 300, 340}), true, false, true, "p95 TTFT rose"},
		// alternating noise of ±10%: the interval includes zero
		{"noise", steadySlices([]float64{110, 90, 110, 90, 110, 90}, flat), true, false, false, "interval includes 0"},
		// two slices cannot be judged
		{"too few", steadySlices([]float64{100, 50}, flat[:2]), false, false, false, "2 steady slices, 3 needed"},
	}
	// A warm-up slice and a drain slice far off the line are not judged.
	edges := steadySlices([]float64{20, 100, 100, 100, 100, 5}, []float64{9000, 100, 100, 100, 100, 1})
	edges[0].Phase, edges[5].Phase = PhaseWarmup, PhaseDrain
	tests = append(tests, struct {
		name         string
		slices       []Slice
		judged, tpsD bool
		ttftD        bool
		text         string
	}{"warm-up and drain excluded", edges, true, false, false, "over 4 steady slices"})
	for _, tt := range tests {
		d := DriftOf(tt.slices)
		if d.Judged != tt.judged || d.OutputTPS.isDrift() != tt.tpsD || d.TTFTP95.isDrift() != tt.ttftD || d.Detected != (tt.tpsD || tt.ttftD) || !strings.Contains(d.Text, tt.text) {
			t.Errorf("%s: judged %v, throughput drift %v, TTFT drift %v, detected %v, text %q; want %v %v %v, %q",
				tt.name, d.Judged, d.OutputTPS.isDrift(), d.TTFTP95.isDrift(), d.Detected, d.Text, tt.judged, tt.tpsD, tt.ttftD, tt.text)
		}
	}
}
