package metrics

import (
	"math"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

const msNS = int64(1e6)

// req builds a successful measured request: sent at sent msNS, first token
// after ttft msNS, then one chunk every gap msNS, each carrying tokens[i].
func req(id int64, sched, sent, ttft, gap int64, tokens ...int) *record.Record {
	r := &record.Record{Schema: record.Schema, ID: id, Phase: record.PhaseMeasured, API: "openai-completions",
		Load: record.Load{Concurrency: 2}, ScheduledNS: sched * msNS, SentNS: sent * msNS,
		PromptTokens: 100, PromptTokensRequested: 100, OutputTokensRequested: 0}
	at := ttft * msNS
	for i, k := range tokens {
		if i > 0 {
			at += gap * msNS
		}
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: at, Tokens: k})
		r.OutputTokens += k
	}
	r.FirstTokenNS = r.SentNS + ttft*msNS
	r.FirstOutputNS = r.FirstTokenNS
	r.EndNS = r.SentNS + at
	return r
}

func get(t *testing.T, d stats.Dist, key string) float64 {
	t.Helper()
	v, ok := d.Get(key)
	if !ok {
		t.Fatalf("%s missing", key)
	}
	return v
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: got %v, want %v", name, got, want)
	}
}

func TestPointFromScriptedRecords(t *testing.T) {
	var a Aggregator
	// A: sent 0, TTFT 100, 4 one-token chunks 20 ms apart: end 160, TPOT 20.
	a.Add(req(1, 0, 0, 100, 20, 1, 1, 1, 1))
	// B: sent 10 (scheduled 0), TTFT 200, chunks of 1 then 3 tokens 30 ms apart:
	// the 3-token chunk spreads 30 ms over 3 tokens: ITL 10,10,10; E2E 230, end 240.
	a.Add(req(2, 0, 10, 200, 30, 1, 3))
	// A failure and a warm-up request do not enter latencies.
	f := &record.Record{Schema: record.Schema, ID: 3, Phase: record.PhaseMeasured, SentNS: 20 * msNS, EndNS: 50 * msNS,
		Error: &record.Error{Class: record.ClassHTTP5xx, Status: 503}}
	a.Add(f)
	w := req(4, 0, 0, 500, 10, 1, 1)
	w.Phase = record.PhaseWarmup
	a.Add(w)

	ps := a.Points()
	if len(ps) != 1 {
		t.Fatalf("got %d points", len(ps))
	}
	p := ps[0]
	if p.Requests.Completed != 2 || p.Requests.Failed != 1 || p.Requests.Errors[record.ClassHTTP5xx] != 1 {
		t.Errorf("requests: %+v", p.Requests)
	}
	near(t, "error rate", p.ErrorRate, 1.0/3)
	near(t, "ttft p50", get(t, p.TTFT, "p50"), 150)
	near(t, "ttft max", get(t, p.TTFT, "max"), 200)
	near(t, "ttft from schedule max", get(t, p.TTFTSched, "max"), 210)
	near(t, "queue max", get(t, p.Queue, "max"), 10)
	// ITL samples: A: 20,20,20; B: 10,10,10 → mean 15, count 6.
	if p.ITL.Count != 6 {
		t.Errorf("itl count %d, want 6", p.ITL.Count)
	}
	near(t, "itl mean", get(t, p.ITL, "mean"), 15)
	// TPOT: A (160−100)/3 = 20; B (230−200)/3 = 10.
	near(t, "tpot max", get(t, p.TPOT, "max"), 20)
	near(t, "tpot min", get(t, p.TPOT, "min"), 10)
	near(t, "decode max", get(t, p.DecodeTPSReq, "max"), 100)
	near(t, "decode min", get(t, p.DecodeTPSReq, "min"), 50)
	near(t, "e2e p50", get(t, p.E2E, "p50"), 195)
	// Window: earliest send 0 to latest end 240 (B: 10+230), failure inside.
	near(t, "duration", p.DurationS, 0.24)
	near(t, "output tps", p.OutputTPS, 8/0.24)
	near(t, "input tps", p.InputTPS, 200/0.24)
	near(t, "request rate", p.RequestRate, 2/0.24)
	near(t, "req/min", p.RequestsPerMinute, 60*2/0.24)
	// Busy time 160 + 230 + 30 over 240 ms.
	near(t, "achieved concurrency", p.ConcurrencyAchieved, 420.0/240)
	if p.ConcurrencyMax != 3 {
		t.Errorf("max in flight %d, want 3", p.ConcurrencyMax)
	}
	near(t, "prefill tps p50", get(t, p.PrefillTPS, "p50"), (1000+500)/2.0)
	near(t, "mean output tokens", p.OutputTokensMean, 4)
	if p.Warmup == nil || p.Warmup.Count != 1 || *p.Warmup.FirstTTFTMS != 500 {
		t.Errorf("warm-up: %+v", p.Warmup)
	}
	near(t, "warm-up decode", get(t, p.Warmup.DecodeTPSReq, "p50"), 100)
	near(t, "warm-up ttft", get(t, p.Warmup.TTFT, "max"), 500)
	near(t, "warm-up e2e", get(t, p.Warmup.E2E, "max"), 510)
	// No reasoning: first output token is the first token.
	near(t, "ttfo p50", get(t, p.TTFO, "p50"), 150)
	near(t, "e2e from schedule max", get(t, p.E2ESched, "max"), 240)
	near(t, "prompt tokens p50", get(t, p.PromptTokens, "p50"), 100)
	near(t, "output tokens max", get(t, p.OutputTokens, "max"), 4)
	near(t, "prompt tokens mean", p.PromptTokensMean, 100)
	if p.ServerPrefill.Count != 0 || p.ServerDecode.Count != 0 {
		t.Errorf("server speeds without server timings: %d %d", p.ServerPrefill.Count, p.ServerDecode.Count)
	}
	if p.OfferedRate != 0 {
		t.Errorf("closed loop has an offered rate %v", p.OfferedRate)
	}
}

func TestReasoningAndServerTimings(t *testing.T) {
	var a Aggregator
	r := req(1, 0, 0, 100, 10, 1, 1, 1, 1)
	// The first two chunks are reasoning: the answer starts at the third.
	r.Chunks[0].Reasoning, r.Chunks[1].Reasoning = true, true
	r.FirstOutputNS = r.SentNS + r.Chunks[2].AtNS
	r.Server = &record.ServerTiming{PromptEvalCount: 100, PromptEvalDuration: 50 * msNS, EvalCount: 4, EvalDuration: 40 * msNS}
	a.Add(r)
	p := a.Points()[0]
	near(t, "ttft", get(t, p.TTFT, "p50"), 100)
	near(t, "ttfo", get(t, p.TTFO, "p50"), 120)
	near(t, "server prefill", get(t, p.ServerPrefill, "p50"), 2000)
	near(t, "server decode", get(t, p.ServerDecode, "p50"), 100)
}

func TestWarningsShortfallAndMismatch(t *testing.T) {
	var a Aggregator
	r := req(1, 0, 0, 10, 10, 1, 1)
	r.OutputTokensRequested = 10
	r.PromptTokens = 107
	r.API = "openai-chat"
	a.Add(r)
	p := a.Points()[0]
	if p.OutputShortfall != 1 || p.PromptMismatch != 1 {
		t.Errorf("shortfall %d mismatch %d, want 1 and 1", p.OutputShortfall, p.PromptMismatch)
	}
	if len(p.Warnings) < 2 {
		t.Errorf("warnings: %q", p.Warnings)
	}
}

func TestCancelledExcludedFromLatency(t *testing.T) {
	var a Aggregator
	r := req(1, 0, 0, 10, 10, 1, 1)
	r.Error = &record.Error{Class: record.ClassCancelled}
	a.Add(r)
	p := a.Points()[0]
	if p.Requests.Cancelled != 1 || p.TTFT.Count != 0 || p.Requests.Failed != 0 {
		t.Errorf("cancelled handling: %+v ttft count %d", p.Requests, p.TTFT.Count)
	}
}

func TestOfferedRate(t *testing.T) {
	var a Aggregator
	for i := range 5 {
		r := req(int64(i), int64(i)*100, int64(i)*100, 10, 10, 1, 1)
		r.Load = record.Load{Rate: 10}
		a.Add(r)
	}
	near(t, "offered", a.Points()[0].OfferedRate, 10)
}

func TestMaxInFlightTouchingIntervals(t *testing.T) {
	if got := maxInFlight([]interval{{0, 10, true}, {10, 20, true}, {5, 15, true}}); got != 2 {
		t.Errorf("got %d, want 2", got)
	}
}
