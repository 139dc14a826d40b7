package slo

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// fakeServer passes every load up to capacity and fails above it.
func fakeServer(capacity float64, tried *[]float64) Probe {
	return func(_ context.Context, l record.Load) (PointVerdict, error) {
		v := LoadValue(l)
		*tried = append(*tried, v)
		pv := PointVerdict{Load: l, Pass: v <= capacity, Failed: []string{}}
		if !pv.Pass {
			pv.Failed = []string{"ttft p95 <= 1s"}
		}
		return pv, nil
	}
}

func TestSearchConcurrency(t *testing.T) {
	for _, tt := range []struct {
		start, capacity float64
		want            float64 // 0: not found
		failsAt         float64 // 0: nothing failed
	}{
		{1, 8, 8, 9},
		{1, 13, 13, 14},
		{1, 1, 1, 2},
		{1, 0, 0, 1},      // fails even at 1
		{8, 3, 3, 4},      // starts too high: ramps down, then bisects
		{1, 1e9, 4096, 0}, // never fails: stops at the maximum
		{2, 100, 100, 101},
	} {
		var tried []float64
		c, err := Search{Start: record.Load{Concurrency: int(tt.start)}}.Run(context.Background(), fakeServer(tt.capacity, &tried))
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		if c.Load != nil {
			got = LoadValue(*c.Load)
		}
		fails := 0.0
		if c.FailsAt != nil {
			fails = LoadValue(*c.FailsAt)
		}
		if got != tt.want || fails != tt.failsAt || c.Found != (tt.want > 0) {
			t.Errorf("capacity %v from %v: got %v (fails at %v), want %v (fails at %v); tried %v", tt.capacity, tt.start, got, fails, tt.want, tt.failsAt, tried)
		}
		if c.Probes != len(tried) || len(tried) > 2*int(math.Log2(4096))+2 {
			t.Errorf("capacity %v: %d probes %v", tt.capacity, c.Probes, tried)
		}
		if fails > 0 && c.FailedSLOs[0] != "ttft p95 <= 1s" {
			t.Errorf("failed SLOs %v", c.FailedSLOs)
		}
	}
}

func TestSearchRate(t *testing.T) {
	var tried []float64
	c, err := Search{Start: record.Load{Rate: 1, MaxConcurrency: 64}}.Run(context.Background(), fakeServer(6.3, &tried))
	if err != nil {
		t.Fatal(err)
	}
	pass, fail := c.Load.Rate, c.FailsAt.Rate
	// Within the resolution: the bracket is at most 10% of the passing rate.
	if !(pass <= 6.3 && fail > 6.3 && fail-pass <= DefaultRateResolution*pass) {
		t.Errorf("bracket [%v, %v] around 6.3; tried %v", pass, fail, tried)
	}
	if c.Load.MaxConcurrency != 64 {
		t.Errorf("the cap is kept: %+v", c.Load)
	}
	// Below the first rate: halves down to start/16.
	tried = nil
	c, _ = Search{Start: record.Load{Rate: 4}}.Run(context.Background(), fakeServer(0.6, &tried))
	if c.Load == nil || c.Load.Rate > 0.6 || c.FailsAt.Rate-c.Load.Rate > 0.1*c.Load.Rate+1e-9 {
		t.Errorf("low capacity: %+v / %+v, tried %v", c.Load, c.FailsAt, tried)
	}
}

func TestSearchStopsOnError(t *testing.T) {
	boom := errors.New("server gone")
	n := 0
	c, err := Search{Start: record.Load{Concurrency: 1}}.Run(context.Background(), func(_ context.Context, l record.Load) (PointVerdict, error) {
		n++
		if n == 3 {
			return PointVerdict{}, boom
		}
		return PointVerdict{Load: l, Pass: true}, nil
	})
	if !errors.Is(err, boom) || c.Load == nil || c.Load.Concurrency != 2 {
		t.Errorf("err %v, partial %+v", err, c.Load)
	}
}

func verdicts(loads []int, pass []bool, tps []float64, e2e []float64) []PointVerdict {
	s, _ := Parse("ttft p95 <= 1s")
	var out []PointVerdict
	for i, c := range loads {
		m := 500.0
		if !pass[i] {
			m = 2100
		}
		chk := check(s, &metrics.PointSummary{TTFT: stats.Dist{P95: &m, Count: 100}})
		pv := PointVerdict{Load: record.Load{Concurrency: c}, Pass: pass[i], OutputTPS: tps[i],
			E2EMeanMS: &e2e[i], Checks: []Check{chk}, Failed: []string{}}
		if !pass[i] {
			pv.Failed = []string{s.Expr}
			pv.Shortfalls = []string{chk.Shortfall()}
		}
		speed := 1000 / e2e[i]
		pv.SpeedP5 = &speed
		out = append(out, pv)
	}
	return out
}

func TestJudgeSweep(t *testing.T) {
	o, _ := ParseObjective([]byte("name: t\nload: {concurrency: [1, 2, 4, 8, 16], target: 8}\ncontext_length: 8192\nslos: [ttft p95 <= 1s, speed p95 >= 20 tok/s]\n"))
	pts := verdicts([]int{1, 2, 4, 8, 16}, []bool{true, true, true, false, false},
		[]float64{100, 200, 400, 800, 805}, []float64{10, 11, 12, 40, 80})
	v := Judge(o, pts, nil, map[record.ServerKey]string{record.ServerMaxModelLen: "4096"})
	if v.Holds || v.Capacity.Method != "sweep" || v.Capacity.Load.Concurrency != 4 || v.Capacity.FailsAt.Concurrency != 8 {
		t.Errorf("capacity %+v holds %v", v.Capacity, v.Holds)
	}
	if !v.Saturation.Found || v.Saturation.Load.Concurrency != 8 || v.Saturation.Next.Concurrency != 16 {
		t.Errorf("saturation %+v", v.Saturation)
	}
	if r := v.Requirements[0]; r.Pass == nil || *r.Pass || *r.Reported != 4096 {
		t.Errorf("context requirement %+v", r)
	}
	for _, want := range []string{
		"meets the objective up to concurrency 4 (at concurrency 8: ttft p95 2.1s > 1s)",
		"saturates at concurrency 8",
		"at concurrency 8 the p95 per-user speed is 25 tok/s, meeting the objective's 20 tok/s",
		"does not hold at the target load, concurrency 8: ttft p95 2.1s > 1s, the server accepts only 4096 tokens",
	} {
		if !strings.Contains(v.Text, want) {
			t.Errorf("text %q\nlacks %q", v.Text, want)
		}
	}
	// Holding: every load passes, the server says nothing of its context.
	all := verdicts([]int{1, 2}, []bool{true, true}, []float64{100, 200}, []float64{10, 10})
	o.Load.Target = 2
	v = Judge(o, all, nil, nil)
	if !v.Holds || v.Requirements[0].Pass != nil || !strings.Contains(v.Text, "meets the objective at every load tried, up to concurrency 2") ||
		!strings.Contains(v.Text, "does not saturate up to concurrency 2") {
		t.Errorf("holding verdict: %v %q", v.Holds, v.Text)
	}
	// A target load that was not measured does not hold.
	o.Load.Target = 32
	if v = Judge(o, all, nil, nil); v.Holds || !strings.Contains(v.Reasons[0], "not measured") {
		t.Errorf("unmeasured target: %+v", v.Reasons)
	}
	if got := slices.Index(PresetNames, "chat"); got != 0 {
		t.Errorf("chat first")
	}
}

// A passing probe that did not hold its load is no evidence: the search
// stops there and says it is bounded by the sample, not by an SLO.
func TestSearchStopsAtALoadNotHeld(t *testing.T) {
	tests := []struct {
		name      string
		notHeldAt float64 // loads at or above it pass without being held
		capacity  float64
		start     float64
		want      float64 // capacity found; 0: none
		bounded   string
		probes    int
	}{
		{"ramp reaches unheld loads first", 16, 100, 1, 8, BoundedBySample, 5}, // 1 2 4 8 16
		{"the SLO binds first", 16, 5, 1, 5, "", 6},                            // 1 2 4 8 → bisect 6 5
		{"nothing held", 1, 100, 1, 0, BoundedBySample, 1},                     // 1
		{"every load passes", 1e9, 1e9, 1, 4096, BoundedBySearchLimit, 13},     // 1 … 4096
	}
	for _, tt := range tests {
		var tried []float64
		probe := func(_ context.Context, l record.Load) (PointVerdict, error) {
			v := LoadValue(l)
			tried = append(tried, v)
			pv := PointVerdict{Load: l, Pass: v <= tt.capacity, Failed: []string{}}
			if pv.Pass && v >= tt.notHeldAt {
				pv.NotHeld = "few requests"
			}
			return pv, nil
		}
		c, err := Search{Start: record.Load{Concurrency: int(tt.start)}}.Run(context.Background(), probe)
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		if c.Load != nil {
			got = LoadValue(*c.Load)
		}
		if got != tt.want || c.BoundedBy != tt.bounded || (tt.bounded == BoundedBySample) != (c.NotHeld != "") {
			t.Errorf("%s: capacity %v bounded by %q (%q), want %v bounded by %q; tried %v", tt.name, got, c.BoundedBy, c.NotHeld, tt.want, tt.bounded, tried)
		}
		if tt.probes > 0 && c.Probes != tt.probes {
			t.Errorf("%s: %d probes %v, want %d", tt.name, c.Probes, tried, tt.probes)
		}
	}
	// A sweep reads the same way.
	l := func(c int) record.Load { return record.Load{Concurrency: c} }
	c := FromSweep([]PointVerdict{{Load: l(1), Pass: true}, {Load: l(2), Pass: true}, {Load: l(4), Pass: true, NotHeld: "few requests"}, {Load: l(8)}})
	if c.Load == nil || *c.Load != l(2) || c.FailsAt != nil || c.BoundedBy != BoundedBySample || !strings.Contains(c.NotHeld, "concurrency 4") {
		t.Errorf("sweep: %+v", c)
	}
}

// A search whose start fails ramps down; a passing probe there that did
// not hold its load ends the search as one on the way up does. Going on
// to a lower load that holds would report that load as the capacity,
// though a load above it was never judged.
func TestSearchRampDownStopsAtALoadNotHeld(t *testing.T) {
	for _, start := range []record.Load{{Concurrency: 16}, {Rate: 16}} {
		var tried []float64
		probe := func(_ context.Context, l record.Load) (PointVerdict, error) {
			v := LoadValue(l)
			tried = append(tried, v)
			pv := PointVerdict{Load: l, Pass: v <= 8, Failed: []string{}}
			if !pv.Pass {
				pv.Failed = []string{"ttft p95 <= 1s"}
			}
			if v == 8 {
				pv.NotHeld = "few requests"
			}
			return pv, nil
		}
		c, err := Search{Start: start}.Run(context.Background(), probe)
		if err != nil {
			t.Fatal(err)
		}
		name := start.Text(record.LoadLong)
		if c.Found || c.Load != nil {
			t.Errorf("%s: capacity %v found below a load not held; tried %v", name, c.Load.Text(record.LoadLong), tried)
		}
		if c.BoundedBy != BoundedBySample || !strings.Contains(c.NotHeld, "8") {
			t.Errorf("%s: bounded by %q (%q), want %q at 8", name, c.BoundedBy, c.NotHeld, BoundedBySample)
		}
		if c.FailsAt == nil || LoadValue(*c.FailsAt) != 16 {
			t.Errorf("%s: fails at %v, want 16", name, c.FailsAt)
		}
		if !slices.Equal(tried, []float64{16, 8}) || c.Probes != 2 {
			t.Errorf("%s: %d probes %v, want 16 then 8", name, c.Probes, tried)
		}
	}
}
