package plan

import (
	"math"
	"testing"
)

func rooflineFor(t *testing.T, model, dev string, o Options) roofline {
	t.Helper()
	p, err := newPlanner(loadModel(t, model), Workload{PromptTokens: 1000, OutputTokens: 100, Concurrency: 1}, o)
	if err != nil {
		t.Fatal(err)
	}
	d := device(t, dev)
	return p.roofline(&d)
}

// TestDecodeStep checks a decode step's terms against hand arithmetic.
func TestDecodeStep(t *testing.T) {
	o := defaultOptions(EngineVLLM)
	o.Eff.StepOverhead = 0
	r := rooflineFor(t, "Llama-3.1-8B", "H100-SXM", o)
	got := r.decode(1, 1000)
	// Memory: 16,060,522,496 weight bytes less the untied 128,256 x 4,096
	// input-embedding table, of which one 4,096-wide row is read, + 1,000
	// cached tokens read and one written x 131,072 KV bytes, over 3.35 TB/s
	// x 0.8.
	mem := (16060522496.0 - 128256*4096*2 + 4096*2 + 1001*131072) / (3.35e12 * 0.8)
	// Compute: 2 x (8.03 B - 0.525 B embedding) + 2 x 32 heads x 256 x 32
	// layers x 1,001 keys (the cached tokens and its own), over 989 TFLOP/s
	// x 0.55.
	comp := (2*(8030261248.0-128256*4096) + 2*32*256*32*1001) / (989e12 * 0.55)
	if !approx(got.Memory, mem, 1e-9) || !approx(got.Compute, comp, 1e-9) || got.Comm != 0 || got.Total() != mem {
		t.Errorf("terms %+v, want memory %g compute %g", got, mem, comp)
	}
	if got.Bound(false) != "memory bandwidth" {
		t.Errorf("bound %q", got.Bound(false))
	}
	// Weights-only crossover: the batch where B x compute per token
	// overtakes the weight stream, about 2 x 10^2 on an H100 in BF16.
	b := r.crossover(1)
	if at := r.decode(b, 1); at.Compute < at.Memory {
		t.Errorf("batch %d is not compute-bound: %+v", b, at)
	}
	if before := r.decode(b-1, 1); before.Compute >= before.Memory {
		t.Errorf("batch %d is already compute-bound", b-1)
	}
	if b < 150 || b > 250 {
		t.Errorf("crossover batch %d, want about 200", b)
	}
}

// TestPrefill checks prefill: 2 x params per token plus causal attention,
// compute-bound for a long prompt.
func TestPrefill(t *testing.T) {
	o := defaultOptions(EngineVLLM)
	o.Eff.StepOverhead = 0
	r := rooflineFor(t, "Llama-3.1-8B", "H100-SXM", o)
	got := r.prefill(4000)
	flops := 4000*2*(8030261248.0-128256*4096) + 2*32*256*(32*4000.0*4001/2)
	if !approx(got.Compute, flops/(989e12*0.55), 1e-9) || got.Bound(false) != "compute" {
		t.Errorf("prefill %+v, want compute %g", got, flops/(989e12*0.55))
	}
	// On a host CPU the compute limit is named CPU.
	if got.Bound(true) != "CPU" {
		t.Errorf("cpu bound %q", got.Bound(true))
	}
}

// TestTensorParallelComm checks that TP divides the work and adds two
// all-reduces per layer; llama.cpp's layer split adds none and divides
// nothing.
func TestTensorParallelComm(t *testing.T) {
	o := defaultOptions(EngineVLLM)
	o.GPUs = 4
	r := rooflineFor(t, "Llama-3.1-70B", "H100-SXM", o)
	got := r.decode(8, 1000)
	one := DefaultAllReduceLatency + 2*3.0/4*8*8192*2/(900e9/2*0.7)
	if !approx(got.Comm, 2*80*one, 1e-9) {
		t.Errorf("comm %g, want %g", got.Comm, 2*80*one)
	}
	// The untied 128,256 x 8,192 input-embedding table is not streamed.
	table := 128256 * 8192 * 2.0
	if !approx(r.m.WeightsRead(1), (141107412992.0-table)/4, 1e-9) {
		t.Errorf("weights per GPU %g", r.m.WeightsRead(1))
	}
	o.Engine = EngineLlamaCpp
	split := rooflineFor(t, "Llama-3.1-70B", "H100-SXM", o)
	if c := split.decode(8, 1000).Comm; c != 0 || split.m.WeightsRead(1) != 141107412992-table {
		t.Errorf("layer split: comm %g, weights %g", c, split.m.WeightsRead(1))
	}
	// A device without an interconnect cannot run TP.
	o.Engine = EngineVLLM
	p, _ := newPlanner(loadModel(t, "Llama-3.1-8B"), Workload{PromptTokens: 10, OutputTokens: 10, Concurrency: 1}, o)
	m4 := device(t, "M4-Max")
	if why := p.unsupported(&m4); why == "" {
		t.Error("TP 4 on an Apple device was not refused")
	}
}

// TestMoETraffic checks that decode reads only the experts a batch touches:
// Mixtral at batch 1 reads 2 of 8 experts, at a large batch all of them.
func TestMoETraffic(t *testing.T) {
	r := rooflineFor(t, "Mixtral-8x7B-v0.1", "H100-SXM", defaultOptions(EngineVLLM))
	s := r.p.s
	total := float64(r.p.weightBytes)
	// The untied input-embedding table is never streamed whole.
	table := float64(s.EmbedParams) * 2
	one := (r.m.WeightsRead(1) + table) / total
	wantOne := float64(s.ActiveParams) / float64(s.Params)
	if !approx(one, wantOne, 1e-9) {
		t.Errorf("batch 1 reads %.4f of the weights, want %.4f (active/total)", one, wantOne)
	}
	if all := (r.m.WeightsRead(1000) + table) / total; !approx(all, 1, 1e-6) {
		t.Errorf("batch 1000 reads %.6f of the weights", all)
	}
}

// TestBinomQuantile checks the quantile used for TTFT under contention.
func TestBinomQuantile(t *testing.T) {
	tests := []struct {
		n    int64
		p, q float64
		want int64
	}{
		{0, 0.5, 0.95, 0},
		{3, 0, 0.95, 0},
		{3, 1, 0.5, 3},
		{3, 0.05, 0.5, 0},  // P(0) = 0.857
		{3, 0.05, 0.95, 1}, // P(<=1) = 0.993
		{10, 0.5, 0.5, 5},
		{1000, 0.5, 0.95, 527}, // normal approximation: 500 + 1.6449 x 15.8
	}
	for _, tt := range tests {
		if got := binomQuantile(tt.n, tt.p, tt.q); got != tt.want {
			t.Errorf("binomQuantile(%d, %g, %g) = %d, want %d", tt.n, tt.p, tt.q, got, tt.want)
		}
	}
}

// TestPerfWorkload checks how perf composes: TPOT adds what the other
// users' prefills add to a decode step; TTFT adds the request overhead;
// the output rate is users x output / E2E, never above batch / TPOT.
func TestPerfWorkload(t *testing.T) {
	s := loadModel(t, "Llama-3.1-8B")
	p, err := newPlanner(s, workedExample, defaultOptions(EngineVLLM))
	if err != nil {
		t.Fatal(err)
	}
	d := device(t, "H100-SXM")
	f := p.perf(&d, 100)
	stall := f.PrefillS - f.StepS
	req := p.opt.Eff.RequestOverhead
	if f.Batch != 4 || !approx(f.TPOTS, f.StepS+3*stall/300, 1e-12) || !approx(f.AggregateTPS, 4*300/f.E2ES, 1e-12) || f.AggregateTPS > 4/f.TPOTS {
		t.Errorf("perf %+v", f)
	}
	if req <= 0 || !approx(f.TTFTBurstS, req+4*f.PrefillS, 1e-12) || f.TTFTP50S < req+f.PrefillS || f.TTFTP95S < f.TTFTP50S || math.IsNaN(f.E2ES) {
		t.Errorf("ttft %+v", f)
	}
	// Only two fit: the other two share the wait for a slot.
	q := p.perf(&d, 2)
	if q.Batch != 2 || q.TTFTP50S <= f.TTFTP50S+f.E2ES/2 || q.AggregateTPS > 2/q.TPOTS {
		t.Errorf("limited batch %+v", q)
	}
}

// TestOllamaCPUPassPerSequence checks the Ollama-on-CPU rule: a decode step
// at batch B is B single-sequence steps (docs/PERFORMANCE.md measured
// 1.1-1.3x that), never compute-bound; on a GPU, and for llama.cpp on a
// CPU, the batch shares one pass.
func TestOllamaCPUPassPerSequence(t *testing.T) {
	cpu := rooflineFor(t, "Llama-3.1-8B", "CPU-EPYC-12ch", defaultOptions(EngineOllama))
	one, four := cpu.decode(1, 1000), cpu.decode(4, 1000)
	if !approx(four.Total(), 4*one.Total(), 1e-12) || !approx(four.Overhead, 4*one.Overhead, 1e-12) {
		t.Errorf("Ollama on CPU: step(4) %+v, want 4 x step(1) %+v", four, one)
	}
	if b := cpu.crossover(1); b != 0 && one.Compute < one.Memory {
		t.Errorf("Ollama on CPU: compute-bound at batch %d", b)
	}
	for _, c := range []struct{ engine, dev string }{{EngineOllama, "H100-SXM"}, {EngineLlamaCpp, "CPU-EPYC-12ch"}} {
		r := rooflineFor(t, "Llama-3.1-8B", c.dev, defaultOptions(c.engine))
		if one, four := r.decode(1, 1000), r.decode(4, 1000); four.Total() >= 2*one.Total() {
			t.Errorf("%s on %s: step(4) %g s, step(1) %g s: one pass expected", c.engine, c.dev, four.Total(), one.Total())
		}
	}
}
