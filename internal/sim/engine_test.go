package sim

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// exact is the default config without jitter: step times follow the model.
func exact() Config {
	c := DefaultConfig()
	c.Jitter = 0
	return c
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

func TestBatch1DecodeIsBandwidthBound(t *testing.T) {
	c := exact()
	// Weights read once per step less the untied input-embedding table, of
	// which one row is read (and one token's KV written), at the usable
	// bandwidth, plus the overhead.
	usable := c.Device.MemBandwidthGBs * 1e9 * c.Device.BandwidthEfficiency
	table := 128256 * 4096 * 2.0
	want := (c.WeightBytes()-table+4096*2+c.KVBytesPerToken())/usable + c.Device.StepOverheadMS/1e3
	if got := c.DecodeStepTime(1, 0).Seconds(); !within(got, want, 1e-6) {
		t.Errorf("batch-1 decode step = %v s, want %v s", got, want)
	}
	// 4096 cached tokens add their KV bytes to the step.
	want += 4096 * c.KVBytesPerToken() / usable
	if got := c.DecodeStepTime(1, 4096).Seconds(); !within(got, want, 1e-3) {
		t.Errorf("decode step with 4096 cached tokens = %v s, want %v s", got, want)
	}
}

func TestPrefillIsComputeBound(t *testing.T) {
	c := exact()
	flops := c.Device.PeakTFLOPS * 1e12 * c.Device.ComputeEfficiency
	for _, n := range []int{512, 4096, 8192} {
		pairs := float64(n) * float64(n+1) / 2
		// The input-embedding lookup does no arithmetic.
		want := (2*(c.Model.Params-128256*4096)*float64(n)+4*32*32*128*pairs)/flops + c.Device.StepOverheadMS/1e3
		if got := c.PrefillTime(n).Seconds(); !within(got, want, 1e-6) {
			t.Errorf("prefill %d tokens = %v s, want %v s", n, got, want)
		}
	}
	// Longer prompts are chunked at max_num_batched_tokens: 20000 = 8192+8192+3616.
	want := c.StepTime(c.prefillChunk(0, 8192)) + c.StepTime(c.prefillChunk(8192, 8192)) + c.StepTime(c.prefillChunk(16384, 3616))
	if got := c.PrefillTime(20000); absDur(got-want) > 2 {
		t.Errorf("chunked prefill = %v, want %v", got, want)
	}
}

func TestSingleRequestTTFTAndDecode(t *testing.T) {
	c := exact()
	for _, p := range []int{100, 512, 8192, 20000} {
		out, _, err := Simulate(c, []Request{{PromptTokens: p, OutputTokens: 64}})
		if err != nil {
			t.Fatal(err)
		}
		o := out[0]
		// TTFT is the request overhead and the prefill, the last prefill
		// step producing the first token.
		if got, want := o.TTFT, c.IdleTTFT(p); absDur(got-want) > time.Microsecond {
			t.Errorf("prompt %d: TTFT = %v, want %v", p, got, want)
		}
		// Roughly prompt / prefill rate, plus one step's overhead per chunk.
		rough := float64(p) * 2 * c.Model.Params / (c.Device.PeakTFLOPS * 1e12 * c.Device.ComputeEfficiency)
		if p >= 512 && !within(c.PrefillTime(p).Seconds(), rough, 0.4) {
			t.Errorf("prompt %d: TTFT %v far from prompt/prefill rate %v s", p, o.TTFT, rough)
		}
		// Each later token costs one batch-1 decode step at the current context.
		if got, want := o.Decode(), c.DecodeStepTime(1, p+32); !within(got.Seconds(), want.Seconds(), 0.01) {
			t.Errorf("prompt %d: time per output token = %v, want ≈ %v", p, got, want)
		}
		if o.Tokens != 64 || o.Queued != 0 || o.Err != nil {
			t.Errorf("prompt %d: outcome %+v", p, o)
		}
	}
}

// throughput runs n requests at a concurrency and returns output tokens per
// second of model time and the outcomes.
func throughput(t *testing.T, c Config, conc, n, prompt, output int) (float64, []Outcome) {
	t.Helper()
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{PromptTokens: prompt, OutputTokens: output}
	}
	out, steps, err := SimulateClosed(c, conc, reqs)
	if err != nil {
		t.Fatal(err)
	}
	last := steps[len(steps)-1]
	return float64(n*output) / (last.Start + last.Duration).Seconds(), out
}

func TestThroughputSaturatesAtSlotLimit(t *testing.T) {
	c := exact() // 8 slots
	var prev float64
	tput := map[int]float64{}
	for _, conc := range []int{1, 2, 4, 8, 16, 32} {
		tp, out := throughput(t, c, conc, 4*conc, 512, 128)
		tput[conc] = tp
		queued := 0
		for _, o := range out {
			if o.Queued > 0 {
				queued++
			}
		}
		switch {
		case conc <= 8:
			if tp < prev*1.5 {
				t.Errorf("concurrency %d: %.0f tok/s, not well above %.0f", conc, tp, prev)
			}
			if queued > 0 {
				t.Errorf("concurrency %d ≤ slots: %d requests queued", conc, queued)
			}
		default:
			if !within(tp, tput[8], 0.05) {
				t.Errorf("concurrency %d: %.0f tok/s, want ≈ %.0f (saturated at 8 slots)", conc, tp, tput[8])
			}
			if queued == 0 {
				t.Errorf("concurrency %d > slots: nobody queued", conc)
			}
		}
		prev = tp
	}
	// Per-request decode speed falls as the batch grows.
	_, one := throughput(t, c, 1, 2, 512, 128)
	_, eight := throughput(t, c, 8, 16, 512, 128)
	if !(eight[0].Decode() > one[0].Decode()) {
		t.Errorf("time per token at batch 8 (%v) not above batch 1 (%v)", eight[0].Decode(), one[0].Decode())
	}
}

// kvConfig has room for exactly blocks KV blocks.
func kvConfig(blocks int, policy string) Config {
	c := exact()
	c.Engine.KVTokens = blocks * c.Engine.BlockSize
	c.Engine.Preemption = policy
	return c
}

// burst is n identical requests arriving together: 100 prompt + 29 output
// tokens peak at 128 cached tokens (the last token is never fed back), 8
// blocks each; admission needs ceil(100/16) = 7.
func burst(n int) []Request {
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{PromptTokens: 100, OutputTokens: 29}
	}
	return reqs
}

func TestKVQueueingAndPreemptionExactlyAtCapacity(t *testing.T) {
	for _, tc := range []struct {
		name          string
		blocks        int
		queued, preem bool
	}{
		{"room for every peak", 32, false, false},
		{"one block short of the peaks", 31, false, true},
		{"room for every prompt, not every peak", 28, false, true},
		{"room for three peaks", 24, true, false},
		{"room for three prompts, not their peaks", 22, true, true},
	} {
		out, steps, err := Simulate(kvConfig(tc.blocks, PreemptRecompute), burst(4))
		if err != nil {
			t.Fatal(err)
		}
		queued, preempted := false, 0
		for _, o := range out {
			queued = queued || o.Queued > 0
			preempted += o.Preemptions
			if o.Err != nil || o.Tokens != 29 {
				t.Errorf("%s: outcome %+v", tc.name, o)
			}
		}
		counted := 0
		for _, s := range steps {
			counted += s.Preempted
			if s.KVBlocksUsed > tc.blocks {
				t.Errorf("%s: step %d uses %d blocks of %d", tc.name, s.Index, s.KVBlocksUsed, tc.blocks)
			}
		}
		if queued != tc.queued || (preempted > 0) != tc.preem || counted != preempted {
			t.Errorf("%s: queued %v (want %v), preemptions %d (steps say %d, want any: %v)",
				tc.name, queued, tc.queued, preempted, counted, tc.preem)
		}
	}
}

func TestRejectModeFailsInsteadOfPreempting(t *testing.T) {
	out, _, err := Simulate(kvConfig(31, PreemptReject), burst(4))
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i, o := range out {
		switch {
		case errors.Is(o.Err, ErrKVCacheFull):
			failed++
			if i != 3 {
				t.Errorf("request %d failed; want the most recently admitted (3)", i)
			}
		case o.Err != nil || o.Tokens != 29 || o.Preemptions != 0:
			t.Errorf("request %d: %+v", i, o)
		}
	}
	if failed != 1 {
		t.Errorf("%d requests failed, want 1", failed)
	}
	if _, _, err := Simulate(kvConfig(32, PreemptReject), burst(4)); err != nil {
		t.Fatal(err)
	}
}

func TestStepsRespectBudgetAndSlots(t *testing.T) {
	c := exact()
	c.Engine.MaxNumBatchedTokens, c.Engine.MaxNumSeqs = 1000, 4
	reqs := make([]Request, 10)
	for i := range reqs {
		reqs[i] = Request{Arrival: time.Duration(i) * 10 * time.Millisecond, PromptTokens: 700 + 100*i, OutputTokens: 20}
	}
	out, steps, err := Simulate(c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.Decode+s.Prefill > 1000 || s.Seqs > 4 || s.Running > 4 {
			t.Fatalf("step %+v breaks the budget or slots", s)
		}
	}
	for i, o := range out {
		if o.Tokens != 20 || o.TTFT < c.PrefillTime(o.PromptTokens) {
			t.Errorf("request %d: %+v, TTFT below its lone prefill %v", i, o, c.PrefillTime(o.PromptTokens))
		}
	}
}

func TestTTFTGrowsWithPromptAndQueue(t *testing.T) {
	c := exact()
	short, _, _ := Simulate(c, []Request{{PromptTokens: 256, OutputTokens: 8}})
	long, _, _ := Simulate(c, []Request{{PromptTokens: 4096, OutputTokens: 8}})
	over := c.IdleTTFT(0) // the request overhead alone
	if !(long[0].TTFT-over > 4*(short[0].TTFT-over)) {
		t.Errorf("TTFT 4096 tokens %v vs 256 tokens %v", long[0].TTFT, short[0].TTFT)
	}
	// 16 requests at once into 8 slots: the second eight wait for the first.
	out, _, _ := Simulate(c, burst(16))
	for i, o := range out {
		if (i >= 8) != (o.Queued > 0) {
			t.Errorf("request %d: queued %v", i, o.Queued)
		}
		if i >= 8 && o.TTFT < out[0].E2E {
			t.Errorf("request %d: TTFT %v before the first batch ended (%v)", i, o.TTFT, out[0].E2E)
		}
	}
}

func TestSameSeedSameSteps(t *testing.T) {
	c := DefaultConfig()
	c.Jitter = 0.2
	reqs := make([]Request, 40)
	for i := range reqs {
		reqs[i] = Request{Arrival: time.Duration(i*i) * time.Millisecond, PromptTokens: 100 + 37*i, OutputTokens: 10 + i}
	}
	_, a, _ := Simulate(c, reqs)
	_, b, _ := Simulate(c, reqs)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different steps")
	}
	c.Seed++
	_, d, _ := Simulate(c, reqs)
	if reflect.DeepEqual(a, d) {
		t.Error("different seed, same steps")
	}
	for i := range a {
		if a[i].Duration <= 0 {
			t.Fatalf("step %d: duration %v", i, a[i].Duration)
		}
	}
}

func TestSimulateRejectsOversizedRequests(t *testing.T) {
	c := kvConfig(8, PreemptRecompute) // 128 tokens
	out, _, err := Simulate(c, []Request{{PromptTokens: 100, OutputTokens: 29}, {PromptTokens: 100, OutputTokens: 28}})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Err == nil || out[1].Err != nil || out[1].Tokens != 28 {
		t.Errorf("outcomes %+v", out)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// A request still in its overhead (API server, template, tokenization) is
// not yet in the engine's queue: vLLM's waiting gauge does not count it,
// and neither may the simulator's, or an idle server at one user reads as
// queueing.
func TestWaitingExcludesRequestsInOverhead(t *testing.T) {
	c := exact()
	c.Engine.RequestOverheadMS = 50
	e := newEngine(c)
	e.add(&seq{id: 1, prompt: 100, target: 4}, 0)
	if got := e.queued(); got != 0 {
		t.Errorf("during the overhead: queued = %d, want 0", got)
	}
	e.now = 0.050
	if got := e.queued(); got != 1 {
		t.Errorf("through the overhead: queued = %d, want 1", got)
	}
	m := newMetrics(c)
	e.now = 0.010
	m.queue(e)
	var g dto.Metric
	if err := m.waiting.Write(&g); err != nil {
		t.Fatal(err)
	}
	if got := g.GetGauge().GetValue(); got != 0 {
		t.Errorf("waiting gauge during the overhead = %v, want 0", got)
	}
}

// While a step is computed its whole batch is running, including the
// requests it just admitted and those it will finish: the gauges show
// the step being computed, not the state left by the one before it.
func TestGaugesShowTheStepInProgress(t *testing.T) {
	c := exact()
	c.Engine.RequestOverheadMS = 0
	e := newEngine(c)
	for i := range 3 {
		e.add(&seq{id: uint64(i), prompt: 64, target: 1}, 0)
	}
	out, ok := e.step()
	if !ok || out.Seqs != 3 {
		t.Fatalf("step: ok %v, %d sequences; want all 3 admitted", ok, out.Seqs)
	}
	m := newMetrics(c)
	m.scheduled(out, e)
	for _, g := range []struct {
		name string
		g    interface{ Write(*dto.Metric) error }
		want float64
	}{{"running", m.running, 3}, {"waiting", m.waiting, 0}} {
		var v dto.Metric
		if err := g.g.Write(&v); err != nil {
			t.Fatal(err)
		}
		if got := v.GetGauge().GetValue(); got != g.want {
			t.Errorf("%s during the step = %v, want %v", g.name, got, g.want)
		}
	}
}

// TestWander: with Wander set, each step runs at 1 + Wander·X(t) of the
// steady engine's speed, X of unit variance whose correlation decays as
// exp(−Δ/WanderTime); the steps of one long decode, set against the same
// decode without it, show both. The wander draws from its own stream: the
// jitter's draws stay as they were, and cancel in the comparison.
func TestWander(t *testing.T) {
	steady := DefaultConfig()
	steady.Jitter = 0.2
	wandering := steady
	wandering.Wander, wandering.WanderTime = 0.15, 1
	req := []Request{{PromptTokens: 16, OutputTokens: 30000}}
	_, base, err := Simulate(steady, req)
	if err != nil {
		t.Fatal(err)
	}
	_, steps, err := Simulate(wandering, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(base) {
		t.Fatalf("%d steps, the steady engine %d", len(steps), len(base))
	}
	// x[i] = X at step i: the step's speed relative to the steady one.
	x := make([]float64, len(steps))
	for i := range steps {
		x[i] = (float64(base[i].Duration)/float64(steps[i].Duration) - 1) / wandering.Wander
	}
	var mean, sq float64
	for _, v := range x {
		mean += v
		sq += v * v
	}
	mean /= float64(len(x))
	sd := math.Sqrt(sq/float64(len(x)) - mean*mean)
	if math.Abs(mean) > 0.3 || !within(sd, 1, 0.2) {
		t.Errorf("X over %d steps: mean %.3f, sd %.3f; want 0 and 1", len(x), mean, sd)
	}
	// The correlation at one correlation time, exp(−1).
	lag := int(float64(time.Second) / float64(steps[len(steps)/2].Duration))
	var c float64
	for i := lag; i < len(x); i++ {
		c += (x[i] - mean) * (x[i-lag] - mean)
	}
	if r := c / float64(len(x)-lag) / (sd * sd); math.Abs(r-math.Exp(-1)) > 0.12 {
		t.Errorf("correlation one correlation time apart (%d steps) %.3f, want %.3f", lag, r, math.Exp(-1))
	}
}
