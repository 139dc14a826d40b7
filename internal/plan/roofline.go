package plan

import "math"

// roofline estimates times on one device from peak rates, efficiency
// factors and the bytes and FLOPs a forward pass needs.
type roofline struct {
	p     *planner
	d     *Device
	bw    float64 // usable memory bandwidth, bytes/s
	flops float64 // usable tensor throughput, FLOP/s
	link  float64 // usable one-direction interconnect bandwidth, bytes/s
	// split is how many devices share each layer's work (vLLM's TP
	// degree); llama.cpp's layer split runs devices one after another, so
	// its time is that of one device holding everything.
	split int
}

func (p *planner) roofline(d *Device) roofline {
	r := roofline{p: p, d: d, split: 1,
		bw:    d.Bandwidth() * p.opt.Eff.Bandwidth,
		flops: d.FLOPS(p.format.Compute) * p.opt.Eff.Compute,
		link:  d.InterconnectGBs.Value * 1e9 / 2 * p.opt.Eff.Interconnect,
	}
	if p.eng.tensorParallel {
		r.split = p.gpus
	}
	return r
}

// Terms are the parts of one forward pass's time, in seconds.
type Terms struct {
	Memory   float64 `json:"memory_s"`
	Compute  float64 `json:"compute_s"`
	Comm     float64 `json:"interconnect_s"`
	Overhead float64 `json:"overhead_s"`
}

// Total is the pass time: memory and compute overlap, the rest adds.
func (t Terms) Total() float64 { return max(t.Memory, t.Compute) + t.Comm + t.Overhead }

// Bound names the largest term as a limit. On a host CPU, compute is "CPU".
func (t Terms) Bound(kind string) string {
	compute := "compute"
	if kind == KindCPU {
		compute = "CPU"
	}
	name, v := "memory bandwidth", t.Memory
	for _, c := range []struct {
		n string
		v float64
	}{{compute, t.Compute}, {"interconnect", t.Comm}, {"CPU (per-step overhead)", t.Overhead}} {
		if c.v > v {
			name, v = c.n, c.v
		}
	}
	return name
}

// weightsRead is the weight bytes one device streams in a pass over n
// tokens: dense weights once, and of the routed experts the expected share
// that n tokens touch, 1 - (1 - k/E)^n.
func (r roofline) weightsRead(n int64) float64 {
	s := r.p.s
	w := float64(r.p.weightBytes) / float64(r.split)
	if s.Experts == 0 || s.ExpertParams == 0 || s.Params == 0 {
		return w
	}
	experts := w * float64(s.ExpertParams) / float64(s.Params)
	touched := 1 - math.Pow(1-float64(s.ExpertsPerToken)/float64(s.Experts), float64(n))
	return w - experts + experts*touched
}

// tokenFLOPs is 2 x the active matrix parameters per token on one device;
// the embedding lookup does no arithmetic (a tied table is the output head).
func (r roofline) tokenFLOPs() float64 {
	s := r.p.s
	n := s.ActiveParams
	if !s.Tied {
		n -= s.EmbedParams
	}
	return 2 * float64(n) / float64(r.split)
}

// pairFLOPs is the attention work per (query, cached token) pair and layer
// on one device: QK^T and AV, 2·heads·(dk + dv). MLA decodes in the latent
// space (weights absorbed), so dk = rank + rope and dv = rank.
func (r roofline) pairFLOPs(decode bool) float64 {
	s := r.p.s
	dk, dv := s.HeadDimK, s.HeadDimV
	if s.MLA && decode {
		dk, dv = s.KVLoRARank+s.RopeDim, s.KVLoRARank
	}
	return 2 * float64(s.Heads) * float64(dk+dv) / float64(r.split)
}

// attended is the cached tokens one query at position ctx sees, summed over
// attention layers.
func (r roofline) attended(ctx int64) float64 {
	s := r.p.s
	return float64(int64(s.count(LayerFull))*ctx + int64(s.count(LayerSliding))*min(ctx, int64(s.Window)))
}

// attendedPrefill sums attended over positions 1..n (causal attention).
func (r roofline) attendedPrefill(n int64) float64 {
	s := r.p.s
	tri := func(k int64) float64 { return float64(k) * float64(k+1) / 2 }
	w := int64(s.Window)
	slide := tri(n)
	if n > w {
		slide = tri(w) + float64(n-w)*float64(w)
	}
	return float64(s.count(LayerFull))*tri(n) + float64(s.count(LayerSliding))*slide
}

// comm is the all-reduce time of a pass over n tokens: two per layer, each
// a ring all-reduce of n x hidden 16-bit values plus a fixed latency.
func (r roofline) comm(n int64) float64 {
	if r.split <= 1 {
		return 0
	}
	if r.link <= 0 {
		return math.Inf(1)
	}
	g := float64(r.split)
	bytes := float64(n) * float64(r.p.s.Hidden) * 2
	one := r.p.opt.Eff.AllReduceLatency + 2*(g-1)/g*bytes/r.link
	return 2 * float64(r.p.s.Layers) * one
}

// decode is one decode step for batch sequences at context ctx. For an
// engine that decodes each sequence in its own pass on a CPU (Ollama), it
// is batch single-sequence steps.
func (r roofline) decode(batch, ctx int64) Terms {
	if r.p.eng.passPerSeqCPU && r.d.Kind == KindCPU && batch > 1 {
		t, b := r.decode(1, ctx), float64(batch)
		return Terms{Memory: b * t.Memory, Compute: b * t.Compute, Comm: b * t.Comm, Overhead: b * t.Overhead}
	}
	kv := float64(r.p.kv.seqBytes(ctx) + r.p.kv.stateSeq()) // state is read and written
	perSeq := r.tokenFLOPs() + r.pairFLOPs(true)*r.attended(ctx)
	return Terms{
		Memory:   (r.weightsRead(batch) + float64(batch)*kv) / r.bw,
		Compute:  float64(batch) * perSeq / r.flops,
		Comm:     r.comm(batch),
		Overhead: r.p.opt.Eff.StepOverhead,
	}
}

// prefill is one prompt of n tokens processed alone, in the engine's
// chunks: weights are streamed once per chunk.
func (r roofline) prefill(n int64) Terms {
	chunk := int64(r.p.eng.prefillChunk)
	chunks := ceilDiv64(n, chunk)
	return Terms{
		Memory:   float64(chunks) * r.weightsRead(min(n, chunk)) / r.bw,
		Compute:  (float64(n)*r.tokenFLOPs() + r.pairFLOPs(false)*r.attendedPrefill(n)) / r.flops,
		Comm:     r.comm(n),
		Overhead: float64(chunks) * r.p.opt.Eff.StepOverhead,
	}
}

// crossover is the smallest batch at which a decode step is compute-bound
// at context ctx, or 0 when KV reads grow as fast as compute and it never is.
func (r roofline) crossover(ctx int64) int64 {
	bound := func(b int64) bool { t := r.decode(b, ctx); return t.Compute >= t.Memory }
	hi := int64(1)
	for !bound(hi) {
		if hi >= 1<<20 {
			return 0
		}
		hi *= 2
	}
	lo := hi / 2
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if bound(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
