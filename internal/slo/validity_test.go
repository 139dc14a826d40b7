package slo

import (
	"context"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// reason is a validity reason of a code, for tests.
func reason(code string) metrics.Reason { return metrics.Reason{Code: code, Text: "because"} }

// Which reasons leave which results inconclusive: the machine's (the
// simulator behind, the client saturated, a server event) any result;
// a load not held and a thin tail only a pass.
func TestQualifyReasons(t *testing.T) {
	for _, tt := range []struct {
		name         string
		pass         bool
		points       []string // the summary points' reason codes
		thin         bool     // one check judged on too few values
		inconclusive bool
	}{
		{"valid pass", true, nil, false, false},
		{"valid fail", false, nil, false, false},
		{"simulator behind, pass", true, []string{metrics.InvalidSimBehind}, false, true},
		{"simulator behind, fail", false, []string{metrics.InvalidSimBehind}, false, true},
		{"client saturated, fail", false, []string{metrics.InvalidClientSaturated}, false, true},
		{"server event, pass", true, []string{metrics.InvalidServerEvent}, false, true},
		{"server event, fail: a server that fell over failed", false, []string{metrics.InvalidServerEvent}, false, false},
		{"load not held, pass", true, []string{metrics.InvalidLoadNotHeld}, false, true},
		{"load not held, fail: less load still fails", false, []string{metrics.InvalidLoadNotHeld}, false, false},
		{"few samples, pass", true, nil, true, true},
		{"few samples, fail: a thin tail that misses, misses", false, nil, true, false},
	} {
		pv := PointVerdict{Load: record.Load{Concurrency: 4}, Pass: tt.pass}
		n := 200
		if tt.thin {
			n = 30
		}
		s := mustParse(t, "ttft p99 <= 1s")[0]
		v := 500.0
		pv.Checks = []Check{{SLO: s.Expr, Metric: s.Metric, Stat: s.Stat, Measured: &v, Pass: tt.pass, Samples: n, slo: s}}
		var points metrics.Validity
		for _, c := range tt.points {
			points.Add(reason(c))
		}
		pv.qualify(points)
		if pv.Inconclusive() != tt.inconclusive {
			t.Errorf("%s: inconclusive %v (%s), want %v", tt.name, pv.Inconclusive(), pv.Validity, tt.inconclusive)
		}
		if tt.thin && tt.pass && !strings.Contains(pv.Validity.String(), "few_samples: too few values: ttft p99 on 30 of the 100 it needs") {
			t.Errorf("%s: %s", tt.name, pv.Validity)
		}
	}
}

// The documented floor: n ≥ 1/(1−q) values for a q-quantile, the speed's
// p95 read as the p5 of speeds; a mean has none.
func TestFewSamplesFloor(t *testing.T) {
	for _, tt := range []struct {
		slo  string
		n    int
		thin bool
	}{
		{"ttft p95 <= 1s", 19, true}, {"ttft p95 <= 1s", 20, false},
		{"e2e p99 <= 1s", 99, true}, {"e2e p99 <= 1s", 100, false},
		{"speed p95 >= 10 tok/s", 19, true}, {"speed p95 >= 10 tok/s", 20, false},
		{"ttft p50 <= 1s", 2, false}, {"ttft p50 <= 1s", 1, true},
		{"ttft mean <= 1s", 1, false},
	} {
		s := mustParse(t, tt.slo)[0]
		v := 1.0
		c := Check{Metric: s.Metric, Stat: s.Stat, Measured: &v, Samples: tt.n, slo: s}
		if _, thin := c.fewSamples(); thin != tt.thin {
			t.Errorf("%s on %d values: thin %v, want %v", tt.slo, tt.n, thin, tt.thin)
		}
	}
}

// The target load on invalid evidence is INCONCLUSIVE, not HOLDS nor NOT
// MET; a failed requirement still decides; a matrix with a cell that
// fails on valid evidence is NOT MET; capacity and saturation stop at the
// first invalid load.
func TestJudgeInconclusive(t *testing.T) {
	o := &Objective{Name: "x", Load: Load{Concurrency: []int{1, 2, 4, 8}, Target: 4}}
	mk := func(c int, pass bool, tps float64, codes ...string) PointVerdict {
		e2e := 100.0 * float64(c)
		pv := PointVerdict{Load: record.Load{Concurrency: c}, Pass: pass, OutputTPS: tps, E2EMeanMS: &e2e}
		for _, code := range codes {
			pv.Validity.Add(reason(code))
		}
		return pv
	}
	pts := []PointVerdict{mk(1, true, 100), mk(2, true, 200), mk(4, true, 210, metrics.InvalidSimBehind), mk(8, true, 215)}
	v := Judge(o, pts, nil, nil)
	if v.Holds || !v.Inconclusive || v.Conclusion != ConclusionInconclusive || v.Why() != "sim_behind: because" {
		t.Errorf("verdict holds %v inconclusive %v %q why %q", v.Holds, v.Inconclusive, v.Conclusion, v.Why())
	}
	if c := v.Capacity; !c.Found || c.Load.Concurrency != 2 || c.BoundedBy != BoundedByInvalid || c.Invalid != "concurrency 4: sim_behind: because" {
		t.Errorf("capacity %+v", c)
	}
	// c=2 → c=8 would be a knee were c=4 not invalid
	if s := v.Saturation; s.Found || s.Inconclusive == "" || s.MaxThroughputLoad.Concurrency != 2 {
		t.Errorf("saturation %+v", s)
	}
	if !strings.Contains(v.Text, "INCONCLUSIVE at the target load, concurrency 4: sim_behind: because") {
		t.Errorf("text %q", v.Text)
	}

	// a requirement the server reported on fails: NOT MET whatever the load
	o.ContextLength = 8192
	v = Judge(o, pts, nil, map[record.ServerKey]string{record.ServerMaxModelLen: "4096"})
	if v.Holds || v.Inconclusive || v.Conclusion != ConclusionNotMet {
		t.Errorf("with a failed requirement: holds %v inconclusive %v", v.Holds, v.Inconclusive)
	}
	o.ContextLength = 0

	// a matrix: one cell inconclusive, one failing on valid evidence
	cell := func(w string, p PointVerdict) PointVerdict { p.Load.Workload = w; return p }
	mx := []PointVerdict{cell("a", mk(4, true, 10, metrics.InvalidClientSaturated)), cell("b", mk(4, false, 10))}
	v = Judge(o, mx, nil, nil)
	if v.Holds || v.Inconclusive || v.Conclusion != ConclusionNotMet {
		t.Errorf("matrix with a valid failure: holds %v inconclusive %v", v.Holds, v.Inconclusive)
	}
	mx[1] = cell("b", mk(4, true, 10))
	v = Judge(o, mx, nil, nil)
	if v.Holds || !v.Inconclusive || v.Conclusion != ConclusionInconclusive || !strings.Contains(v.Text, "INCONCLUSIVE") {
		t.Errorf("matrix with an inconclusive cell: holds %v inconclusive %v %q", v.Holds, v.Inconclusive, v.Text)
	}
}

// An inconclusive candidate is neither ranked nor ruled out.
func TestDecideInconclusive(t *testing.T) {
	o := &Objective{Name: "t", Priority: PriorityResponsiveness}
	a := outcome("a", map[string]string{"gpus": "1"}, false, 4, nil)
	a.Verdict.Inconclusive = true
	b := outcome("b", map[string]string{"gpus": "2"}, false, 4, nil)
	d := Decide(o, []Outcome{a, b})
	if d.Recommended != "" || len(d.Inconclusive) != 1 || d.Inconclusive[0] != "a" || !strings.Contains(d.Why, "a INCONCLUSIVE") {
		t.Errorf("decision %+v", d)
	}
	b.Verdict.Holds = true
	d = Decide(o, []Outcome{a, b})
	if d.Recommended != "b" || !strings.Contains(d.Why, "a INCONCLUSIVE") {
		t.Errorf("decision %+v", d)
	}
}

// A probe whose simulator fell behind is measured once more; when that
// one is valid the search goes on as if nothing happened, and when it is
// invalid again the search stops there: the capacity is the last valid
// load, inconclusive beyond it, never the invalid one. A thin tail is not
// measured again: it would be as thin.
func TestSearchRemeasuresInvalidProbe(t *testing.T) {
	for _, tt := range []struct {
		name    string
		behind  int // how many times a probe of c=8 falls behind
		code    string
		want    int // capacity found
		bounded string
		again   int // how many times c=8 was measured again
	}{
		{"once, then valid", 1, metrics.InvalidSimBehind, 12, "", 1},
		{"twice: the search stops", 2, metrics.InvalidSimBehind, 4, BoundedByInvalid, 1},
		{"client saturated twice", 2, metrics.InvalidClientSaturated, 4, BoundedByInvalid, 1},
		{"few samples: not measured again", 1, metrics.InvalidFewSamples, 4, BoundedByInvalid, 0},
	} {
		var tried []float64
		left := tt.behind
		probe := func(_ context.Context, l record.Load) (PointVerdict, error) {
			v := LoadValue(l)
			tried = append(tried, v)
			pv := PointVerdict{Load: l, Pass: v <= 12, Failed: []string{}}
			if !pv.Pass {
				pv.Failed = []string{"ttft p95 <= 1s"}
			}
			if v == 8 && left > 0 {
				left--
				pv.Validity.Add(reason(tt.code))
			}
			return pv, nil
		}
		again := 0
		s := Search{Start: record.Load{Concurrency: 1}, Again: func(ctx context.Context, l record.Load) (PointVerdict, error) {
			again++
			return probe(ctx, l)
		}}
		c, err := s.Run(context.Background(), probe)
		if err != nil {
			t.Fatal(err)
		}
		if c.Load == nil || c.Load.Concurrency != tt.want || c.BoundedBy != tt.bounded || again != tt.again || c.Probes != len(tried) {
			t.Errorf("%s: capacity %v bounded by %q (%s), measured again %d, %d probes; tried %v", tt.name, c.Load, c.BoundedBy, c.Invalid, again, c.Probes, tried)
		}
		if tt.bounded == BoundedByInvalid && (c.FailsAt != nil || !strings.HasPrefix(c.Invalid, "concurrency 8: "+tt.code)) {
			t.Errorf("%s: fails at %v, invalid %q", tt.name, c.FailsAt, c.Invalid)
		}
	}
}

// A load's verdict carries the validity of the points pooled into it;
// a load set aside (Discard) is judged afresh by the points measured
// after, and the set-aside points' records are ignored (Skip).
func TestEvaluatorQualifyAndDiscard(t *testing.T) {
	c4 := record.Load{Concurrency: 4}
	checks := mustParse(t, "ttft p50 <= 1s")
	var ev Evaluator
	for i := range int64(40) {
		ev.Add(req(0, c4, i, (i/4)*100, 50, 10, 5))
	}
	behind := metrics.Validity{}
	behind.Add(reason(metrics.InvalidSimBehind))
	ev.Qualify([]metrics.PointSummary{{Index: 0, Validity: behind}})
	pv, _ := ev.Level(c4, checks, Options{})
	if !pv.Inconclusive() || !pv.Validity.Has(metrics.InvalidSimBehind) {
		t.Fatalf("validity %s, want the point's sim_behind", pv.Validity)
	}
	if got := ev.Discard(c4); len(got) != 1 || got[0] != 0 {
		t.Fatalf("discarded %v, want point 0", got)
	}
	if _, ok := ev.Level(c4, checks, Options{}); ok {
		t.Fatal("the load is still measured after Discard")
	}
	for i := range int64(40) {
		ev.Add(req(0, c4, 100+i, (i/4)*100, 50, 10, 5)) // a late record of the set-aside point
		ev.Add(req(1, c4, 200+i, (i/4)*100, 50, 10, 5))
	}
	ev.Qualify([]metrics.PointSummary{{Index: 0, Validity: behind}, {Index: 1}})
	pv, _ = ev.Level(c4, checks, Options{})
	if pv.Inconclusive() || len(pv.Points) != 1 || pv.Points[0] != 1 || pv.Requests != 40 {
		t.Errorf("after measuring again: validity %s, points %v, %d requests", pv.Validity, pv.Points, pv.Requests)
	}
}
