package perfmodel

import (
	"math"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// TestChunk checks one sequence's work in a step against hand counts.
func TestChunk(t *testing.T) {
	full := Attention{FullLayers: 2}
	slide := Attention{FullLayers: 1, SlidingLayers: 1, Window: 4}
	tests := []struct {
		name   string
		a      Attention
		cached int64
		q      int64
		decode bool
		want   Batch
	}{
		// A 3-token prompt: pairs 1+2+3 per layer, 3 tokens written per layer.
		{"prompt", full, 0, 3, false, Batch{Tokens: 3, Seqs: 1, PrefillTokens: 3, KVLayerTokens: 6, PrefillPairs: 12}},
		// A decode after 10 cached: 10 read + 1 written, 11 keys, per layer.
		{"decode", full, 10, 1, true, Batch{Tokens: 1, Seqs: 1, Decodes: 1, CachedTokens: 10, KVLayerTokens: 22, DecodePairs: 22}},
		// The sliding layer sees at most 4 of the 10 cached tokens.
		{"window", slide, 10, 1, true, Batch{Tokens: 1, Seqs: 1, Decodes: 1, CachedTokens: 10, KVLayerTokens: 10 + 4 + 2, DecodePairs: 11 + 4}},
		// A second chunk of 2 after 3: positions 4 and 5 see 4 and 5 keys
		// fully, 4 and 4 in the window.
		{"chunk", slide, 3, 2, false, Batch{Tokens: 2, Seqs: 1, PrefillTokens: 2, CachedTokens: 3, KVLayerTokens: 3 + 3 + 4, PrefillPairs: 9 + 8}},
	}
	for _, tt := range tests {
		if got := tt.a.Chunk(tt.cached, tt.q, tt.decode); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func testModel() Model {
	return Model{Attention: Attention{FullLayers: 2}, Rates: Rates{Bandwidth: 1e12, FLOPS: 1e14, Link: 1e11},
		WeightBytes: 1e9, EmbedRowBytes: 100, TokenFLOPs: 2e9, DecodePairFLOPs: 1e3, PrefillPairFLOPs: 1e3,
		KVLayerBytes: 1e3, TP: 1, Layers: 2, Hidden: 1000, AllReduceLatency: 1e-5,
		Overheads: Overheads{Step: 1e-3, Request: 20e-3}, PrefillChunk: 100}
}

// TestStepTerms checks the roofline of a step by hand.
func TestStepTerms(t *testing.T) {
	m := testModel()
	b := m.Chunk(10, 1, true)
	b.Add(m.Chunk(0, 50, false))
	got := m.StepTerms(b)
	// Memory: weights + 51 embedding rows + (22 + 100) KV layer-tokens x 1 kB.
	mem := (1e9 + 51*100 + 122*1e3) / 1e12
	// Compute: 51 tokens x 2 GFLOP + (22 + 2 x 1275) pairs x 1 kFLOP.
	comp := (51*2e9 + (22+2*1275)*1e3) / 1e14
	if !near(got.Memory, mem, 1e-12) || !near(got.Compute, comp, 1e-12) || got.Comm != 0 || got.Overhead != 1e-3 {
		t.Errorf("terms %+v, want memory %g compute %g", got, mem, comp)
	}
	if m.StepTime(b) != max(mem, comp)+1e-3 || got.Bound(false) != "compute" {
		t.Errorf("step %g, bound %s", m.StepTime(b), got.Bound(false))
	}
	// TP 2: two all-reduces per layer of 51 x 1000 x 2 B, each 2 x 1/2 of
	// it over the link plus the latency.
	m.TP = 2
	if got, want := m.AllReduce(51), 2*2*(1e-5+51*1000*2/1e11); !near(got, want, 1e-12) {
		t.Errorf("all-reduce %g, want %g", got, want)
	}
	// One pass per sequence: two sequences cost two single passes.
	m.TP, m.PassPerSeq = 1, true
	two := DecodeBatch(m, 2, 10)
	if got, want := m.StepTime(two), 2*m.StepTime(m.Chunk(10, 1, true)); !near(got, want, 1e-12) {
		t.Errorf("pass per sequence %g, want %g", got, want)
	}
}

// TestWeightsReadMoE checks the share of routed experts a pass touches.
func TestWeightsReadMoE(t *testing.T) {
	m := Model{WeightBytes: 1e9, ExpertBytes: 8e9, Experts: 8, ExpertsPerToken: 2}
	if got := m.WeightsRead(1); !near(got, 1e9+2e9, 1e-12) {
		t.Errorf("one token reads %g", got)
	}
	if got := m.WeightsRead(1000); !near(got, 9e9, 1e-9) {
		t.Errorf("1000 tokens read %g", got)
	}
}

// TestIdleFigures checks the helpers both the planner and the simulator
// use: chunked prefill, idle TTFT with the request overhead.
func TestIdleFigures(t *testing.T) {
	m := testModel()
	// 250 tokens in chunks of 100: steps of 100, 100 and 50 tokens.
	want := m.StepTime(m.Chunk(0, 100, false)) + m.StepTime(m.Chunk(100, 100, false)) + m.StepTime(m.Chunk(200, 50, false))
	if got := PrefillTime(m, 250, m.PrefillChunk); !near(got, want, 1e-12) {
		t.Errorf("prefill %g, want %g", got, want)
	}
	if got := IdleTTFT(m, 250, m.PrefillChunk); !near(got, want+0.02, 1e-12) {
		t.Errorf("idle TTFT %g, want %g", got, want+0.02)
	}
}

// TestFitted checks the engine-agnostic form term by term.
func TestFitted(t *testing.T) {
	f := Fitted{Fixed: 1e-3, Weights: 5e-3, PerToken: 1e-5, PerKVToken: 1e-8, PerPair: 1e-10, PerSeq: 1e-5, Request: 0.03}
	// Four decodes at 1,000 cached tokens: weights dominate the token term.
	dec := DecodeBatch(f, 4, 1000)
	if got, want := f.StepTime(dec), 1e-3+5e-3+1e-8*4*1001+4e-5; !near(got, want, 1e-12) {
		t.Errorf("decode %g, want %g", got, want)
	}
	// A 2,000-token prompt: the token term dominates.
	pre := f.Chunk(0, 2000, false)
	if got, want := f.StepTime(pre), 1e-3+2e-2+1e-8*2000+1e-10*2000*2001/2+1e-5; !near(got, want, 1e-12) {
		t.Errorf("prefill %g, want %g", got, want)
	}
	if got := IdleTTFT(f, 2000, 8192); !near(got, 0.03+f.StepTime(pre), 1e-12) {
		t.Errorf("idle TTFT %g", got)
	}
}
