package slo

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

const ms = int64(1e6)

// req builds a measured record: sent at sentMS, first token after ttftMS,
// then n−1 tokens gapMS apart, one per chunk.
func req(point int, load record.Load, id int64, sentMS, ttftMS, gapMS int64, n int) *record.Record {
	r := &record.Record{Schema: record.Schema, Point: point, Load: load, ID: id, Phase: record.PhaseMeasured,
		ScheduledNS: sentMS * ms, SentNS: sentMS * ms, OutputTokens: n, PromptTokens: 10}
	for i := range n {
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: (ttftMS + int64(i)*gapMS) * ms, Tokens: 1})
	}
	r.FirstTokenNS = r.SentNS + ttftMS*ms
	r.EndNS = r.SentNS + (ttftMS+int64(n-1)*gapMS)*ms
	return r
}

func failed(point int, load record.Load, id int64, sentMS, endMS int64) *record.Record {
	return &record.Record{Schema: record.Schema, Point: point, Load: load, ID: id, Phase: record.PhaseMeasured,
		ScheduledNS: sentMS * ms, SentNS: sentMS * ms, EndNS: endMS * ms,
		Error: &record.Error{Class: record.ClassHTTP5xx, Message: "boom"}}
}

func mustParse(t *testing.T, exprs ...string) []SLO {
	t.Helper()
	var out []SLO
	for _, e := range exprs {
		s, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestGoodputAndAttainment(t *testing.T) {
	c2 := record.Load{Concurrency: 2}
	var ev Evaluator
	// Window 0–1000 ms. Four requests: one good, one with a slow first
	// token, one decoding too slowly (gap 100 ms → 10 tok/s), one failed.
	ev.Add(req(0, c2, 0, 0, 100, 20, 11)) // ttft 100, tpot 20 → good
	ev.Add(req(0, c2, 1, 0, 900, 10, 11)) // ttft 900 > 500
	ev.Add(req(0, c2, 2, 0, 100, 80, 11)) // 12.5 tok/s < 20
	ev.Add(failed(0, c2, 3, 500, 1000))   // never good
	warm := req(0, c2, 4, 0, 5000, 10, 3) // warm-up: excluded
	warm.Phase = record.PhaseWarmup
	ev.Add(warm)
	checks := mustParse(t, "ttft p50 <= 500ms", "speed p50 >= 20 tok/s")
	pts := ev.Evaluate(checks, Options{})
	if len(pts) != 1 {
		t.Fatalf("%d levels", len(pts))
	}
	pv := pts[0]
	if pv.Requests != 4 || pv.Good != 1 {
		t.Errorf("requests %d good %d, want 4 and 1", pv.Requests, pv.Good)
	}
	if got := *pv.Attainment; got != 0.25 {
		t.Errorf("attainment %v, want 0.25", got)
	}
	// The window is from the earliest send (0) to the latest end (1000 ms):
	// the failed request's end.
	if math.Abs(pv.Goodput-1) > 1e-9 {
		t.Errorf("goodput %v req/s, want 1", pv.Goodput)
	}
	// The point-level SLOs read the same numbers as the summary.
	var agg metrics.Aggregator
	for _, r := range []*record.Record{req(0, c2, 0, 0, 100, 20, 11), req(0, c2, 1, 0, 900, 10, 11), req(0, c2, 2, 0, 100, 80, 11), failed(0, c2, 3, 500, 1000)} {
		agg.Add(r)
	}
	pt, _ := agg.Point(0)
	if got, want := *pv.Checks[0].Measured, *pt.TTFT.P50; got != want {
		t.Errorf("ttft p50 %v, summary %v", got, want)
	}
	if got, want := *pv.Checks[1].Measured, *pt.DecodeTPSReq.P50; got != want {
		t.Errorf("speed p50 %v, summary %v", got, want)
	}
}

// TestGoodputSkipsMissingValues: a one-token answer has no TPOT and no
// decode speed (docs/METRICS.md); a per-request target on a value the
// request lacks is not judged, so the request still counts as good when
// it meets the targets it has. Judged as failing, attainment would drop
// to 50% with no request having missed anything.
func TestGoodputSkipsMissingValues(t *testing.T) {
	c1 := record.Load{Concurrency: 1}
	var ev Evaluator
	ev.Add(req(0, c1, 0, 0, 100, 20, 1))  // ttft 100, one token: no TPOT, no speed
	ev.Add(req(0, c1, 1, 0, 100, 20, 11)) // ttft 100, tpot 20
	for _, slo := range []string{"tpot p50 <= 50ms", "speed p50 >= 10 tok/s", "itl p50 <= 50ms"} {
		pv := ev.Evaluate(mustParse(t, "ttft p50 <= 500ms", slo), Options{})[0]
		if pv.Requests != 2 || pv.Good != 2 {
			t.Errorf("%s: requests %d good %d, want 2 and 2", slo, pv.Requests, pv.Good)
		}
		if pv.Attainment == nil {
			t.Errorf("%s: no attainment, want 1", slo)
		} else if *pv.Attainment != 1 {
			t.Errorf("%s: attainment %v, want 1", slo, *pv.Attainment)
		}
	}
	// The one-token answer is still judged on the value it has.
	pv := ev.Evaluate(mustParse(t, "ttft p50 <= 50ms", "tpot p50 <= 50ms"), Options{})[0]
	if pv.Good != 0 {
		t.Errorf("ttft 100 ms against 50 ms: good %d, want 0", pv.Good)
	}
}

// TestSpeedPercentileBothWays: "speed p95 >= 20" holds when at least 95%
// of requests decode at 20 tok/s or faster, and fails when fewer do —
// the reverse reading (the p95 of speed) would pass both.
func TestSpeedPercentileBothWays(t *testing.T) {
	checks := mustParse(t, "speed p95 >= 20 tok/s")
	for _, tt := range []struct {
		slow int
		pass bool
	}{{4, true}, {6, false}} {
		var ev Evaluator
		c1 := record.Load{Concurrency: 1}
		for i := range 100 {
			gap := int64(40) // 25 tok/s
			if i < tt.slow {
				gap = 100 // 10 tok/s
			}
			ev.Add(req(0, c1, int64(i), int64(i)*1000, 10, gap, 5))
		}
		pv := ev.Evaluate(checks, Options{})[0]
		if pv.Pass != tt.pass {
			t.Errorf("%d of 100 slow: pass %v, want %v (measured %v)", tt.slow, pv.Pass, tt.pass, *pv.Checks[0].Measured)
		}
	}
	// And a latency ceiling the other way: ttft p95 <= 100ms.
	lat := mustParse(t, "ttft p95 <= 100ms")
	for _, tt := range []struct {
		slow int
		pass bool
	}{{4, true}, {6, false}} {
		var ev Evaluator
		for i := range 100 {
			ttft := int64(50)
			if i < tt.slow {
				ttft = 500
			}
			ev.Add(req(0, record.Load{Concurrency: 1}, int64(i), int64(i)*1000, ttft, 10, 3))
		}
		if pv := ev.Evaluate(lat, Options{})[0]; pv.Pass != tt.pass {
			t.Errorf("ttft: %d of 100 slow: pass %v, want %v", tt.slow, pv.Pass, tt.pass)
		}
	}
}

func TestRepeatsPoolAndIntervals(t *testing.T) {
	c4 := record.Load{Concurrency: 4}
	var ev Evaluator
	for rep := range 3 {
		for i := range 40 {
			ev.Add(req(rep, c4, int64(rep*100+i), int64(i)*50, int64(100+i+rep*10), 10, 4))
		}
	}
	checks := mustParse(t, "ttft p95 <= 200ms", "error_rate <= 1%", "itl p99 <= 20ms")
	pv := ev.Evaluate(checks, Options{Intervals: true, Iterations: 300, Seed: 1})[0]
	if len(pv.Points) != 3 || pv.Requests != 120 {
		t.Fatalf("points %v, requests %d", pv.Points, pv.Requests)
	}
	c := pv.Checks[0]
	if c.CI == nil || !(c.CI.Low <= *c.Measured && *c.Measured <= c.CI.High) || c.Certainty != "pass" {
		t.Errorf("ttft interval %+v around %v, certainty %q", c.CI, *c.Measured, c.Certainty)
	}
	if pv.Checks[1].CI == nil || pv.Checks[1].CI.High != 0 {
		t.Errorf("error-rate interval %+v", pv.Checks[1].CI)
	}
	// An SLO whose target sits inside the interval is uncertain.
	tight := mustParse(t, "ttft p95 <= "+strings.TrimSuffix(pv.Checks[0].SLOValue().Format(*c.Measured), "ms")+"ms")
	pv2 := ev.Evaluate(tight, Options{Intervals: true, Iterations: 300, Seed: 1})[0]
	if pv2.Checks[0].Certainty != "uncertain" {
		t.Errorf("target at the estimate: certainty %q, interval %+v", pv2.Checks[0].Certainty, pv2.Checks[0].CI)
	}
}

func TestOverloadedLoadFails(t *testing.T) {
	var ev Evaluator
	l := record.Load{Rate: 8}
	ev.Add(req(0, l, 0, 0, 10, 10, 3))
	ev.MarkOverloaded(l, "time to first token grew without bound")
	pv := ev.Evaluate(mustParse(t, "ttft p95 <= 1s"), Options{})[0]
	if pv.Pass || pv.Overloaded == "" {
		t.Errorf("overloaded load passes: %+v", pv)
	}
	// Nothing measured at all fails with no value.
	var empty Evaluator
	empty.MarkOverloaded(l, "x")
	pv = empty.Evaluate(mustParse(t, "ttft p95 <= 1s"), Options{})[0]
	if pv.Pass || pv.Checks[0].Measured != nil || pv.Attainment != nil {
		t.Errorf("empty load: %+v", pv)
	}
}

func TestOverloadDetector(t *testing.T) {
	checks := mustParse(t, "ttft p95 <= 100ms")
	o := NewOverload(checks)
	why := ""
	// TTFT from schedule rising 200 ms per request: beyond 10 × 100 ms
	// for ten requests in a row.
	for i := range 40 {
		r := req(0, record.Load{Rate: 50}, int64(i), int64(i)*20, 10, 1, 2)
		r.ScheduledNS = r.SentNS - int64(i)*200*ms
		if w := o.Add(r); w != "" {
			why = w
			break
		}
	}
	if !strings.Contains(why, "grew without bound") {
		t.Errorf("rising TTFT not detected: %q", why)
	}
	e := NewOverload(checks)
	why = ""
	for i := range 12 {
		if w := e.Add(failed(0, record.Load{Rate: 50}, int64(i), 0, 1)); w != "" {
			why = w
		}
	}
	if !strings.Contains(why, "failed") {
		t.Errorf("errors not detected: %q", why)
	}
	// A wrong URL or model fails at any load: never evidence of overload.
	for _, class := range []string{record.ClassConnect, record.ClassHTTP4xx, record.ClassMalformed, record.ClassNotStream} {
		wrong := NewOverload(checks)
		for i := range 40 {
			r := failed(0, record.Load{Rate: 50}, int64(i), 0, 1)
			r.Error.Class = class
			if w := wrong.Add(r); w != "" {
				t.Errorf("%s failures called overload: %s", class, w)
				break
			}
		}
	}
	steady := NewOverload(checks)
	for i := range 50 {
		if w := steady.Add(req(0, record.Load{Rate: 5}, int64(i), int64(i)*200, 50, 10, 3)); w != "" {
			t.Fatalf("steady load called overloaded: %s", w)
		}
	}
}

// TestQueueGrowth: an open-loop load whose TTFT from the schedule keeps
// rising fails as overloaded even when its percentiles pass (a fixed
// request count bounds the queue); a steady one does not.
func TestQueueGrowth(t *testing.T) {
	checks := mustParse(t, "ttft p99 <= 2s")
	for _, tt := range []struct {
		name     string
		growMS   int64 // added TTFT per request, 50 ms apart
		overload bool
	}{{"growing 0.4 s/s", 20, true}, {"steady", 0, false}, {"slow drift 0.04 s/s", 2, false}} {
		var ev Evaluator
		l := record.Load{Rate: 20}
		for i := range int64(60) {
			r := req(0, l, i, i*50, 100+i*tt.growMS, 10, 3)
			ev.Add(r)
		}
		pv := ev.Evaluate(checks, Options{})[0]
		if (pv.Overloaded != "") != tt.overload || pv.Pass == tt.overload {
			t.Errorf("%s: overloaded %q, pass %v", tt.name, pv.Overloaded, pv.Pass)
		}
	}
}

// A load that passes without holding its users busy is marked not held,
// and an objective whose target load was not held is inconclusive: the
// pass is no evidence, and nothing failed.
func TestNotHeldLoad(t *testing.T) {
	c8 := record.Load{Concurrency: 8}
	var ev Evaluator
	for i := range int64(3) { // 3 requests for 8 users: never more than 3 in flight
		ev.Add(req(0, c8, i, 0, 50, 10, 5))
	}
	checks := mustParse(t, "ttft p50 <= 1s")
	pv, _ := ev.Level(c8, checks, Options{})
	if !pv.Pass || !strings.Contains(pv.NotHeld, "3.0 of 8 users in flight") {
		t.Errorf("pass %v, not held %q: want a pass marked not held", pv.Pass, pv.NotHeld)
	}
	o := &Objective{Name: "x", Load: Load{Concurrency: []int{8}, Target: 8}}
	v := Judge(o, []PointVerdict{pv}, nil, nil)
	if v.Holds || !v.Inconclusive || v.Conclusion != ConclusionInconclusive || v.Capacity.Found || v.Capacity.BoundedBy != BoundedBySample ||
		!strings.Contains(strings.Join(v.Reasons, " "), "load_not_held: 3.0 of 8 users") {
		t.Errorf("verdict holds %v, capacity %+v, reasons %q", v.Holds, v.Capacity, v.Reasons)
	}
}

// An open loop whose requests all time out is overloaded in the verdict,
// with the summary's evidence, even when no SLO names timeouts.
func TestOpenLoopTimeoutsAreOverload(t *testing.T) {
	r10 := record.Load{Rate: 10}
	var ev Evaluator
	for i := range int64(20) {
		f := failed(0, r10, i, 100*i, 100*i+50)
		f.Error.Class = record.ClassTimeoutFirst
		ev.Add(f)
	}
	pv, _ := ev.Level(r10, mustParse(t, "ttft p50 <= 1s"), Options{})
	if pv.Pass || !strings.Contains(pv.Overloaded, "timeouts dominate: 20 of 20") || pv.Failing != "" {
		t.Errorf("pass %v, overloaded %q, failing %q", pv.Pass, pv.Overloaded, pv.Failing)
	}
}

// TestFirstChunkBundlesTokens: a request whose first chunk carries 3 of its
// 11 tokens, then 8 chunks 25 ms apart, decoded 8 tokens in 200 ms: ITL
// and TPOT 25 ms, 40 tok/s. Counting 10 tokens after the first would read
// 20 ms and 50 tok/s and call it good against either objective.
func TestFirstChunkBundlesTokens(t *testing.T) {
	c1 := record.Load{Concurrency: 1}
	r := req(0, c1, 0, 0, 100, 25, 9)
	r.Chunks[0].Tokens, r.OutputTokens = 3, 11
	for _, c := range []struct {
		slo  string
		good int
	}{
		{"itl p50 <= 22ms", 0},
		{"itl p50 <= 26ms", 1},
		{"tpot p50 <= 22ms", 0},
		{"speed p50 >= 45 tok/s", 0},
		{"speed p50 >= 39 tok/s", 1},
	} {
		var ev Evaluator
		ev.Add(r)
		pts := ev.Evaluate(mustParse(t, c.slo), Options{})
		if got := pts[0].Good; got != c.good {
			t.Errorf("%s: good %d, want %d", c.slo, got, c.good)
		}
	}
}

// TestJudgedEvaluatorCountsEveryRequest: with its checks known before the
// records, a judged run's evaluator counts every request's goodput as it
// comes and keeps a bounded sample for intervals; its verdict is the one
// of an evaluator that kept every request.
func TestJudgedEvaluatorCountsEveryRequest(t *testing.T) {
	c4 := record.Load{Rate: 4}
	checks := mustParse(t, "ttft p95 <= 500ms", "speed p50 >= 20 tok/s")
	bounded := Evaluator{Checks: checks}
	var whole Evaluator
	const n = 3*KeepJudged + 17
	for i := range int64(n) {
		// every third request's first token is late; the queue grows by
		// 1 ms a request sent 5 ms apart
		ttft := 100 + i%50 + i
		if i%3 == 0 {
			ttft = 900
		}
		r := req(0, c4, i, i*5, ttft, 20, 11)
		if i%7 == 0 {
			r = failed(0, c4, i, i*5, i*5+30)
		}
		bounded.Add(r)
		whole.Add(r)
	}
	kept, recorded := bounded.Kept(c4)
	if recorded != n || kept > KeepJudged || kept < KeepJudged/2 {
		t.Errorf("kept %d of %d, want at most %d and at least half that", kept, recorded, KeepJudged)
	}
	got, want := bounded.Evaluate(checks, Options{})[0], whole.Evaluate(checks, Options{})[0]
	if got.Requests != n || got.Requests != want.Requests || got.Good != want.Good || *got.Attainment != *want.Attainment || got.Goodput != want.Goodput {
		t.Errorf("bounded: %d requests, %d good, attainment %v, goodput %v; every request kept: %d, %d, %v, %v",
			got.Requests, got.Good, *got.Attainment, got.Goodput, want.Requests, want.Good, *want.Attainment, want.Goodput)
	}
	if got.Overloaded != want.Overloaded || want.Overloaded == "" {
		t.Errorf("overloaded %q, every request kept %q", got.Overloaded, want.Overloaded)
	}
	// Other checks than those counted: the kept requests.
	other := mustParse(t, "ttft p50 <= 500ms")
	if pv := bounded.Evaluate(other, Options{})[0]; pv.Requests != kept {
		t.Errorf("judged on other checks: %d requests, want the %d kept", pv.Requests, kept)
	}
}
