package plan

import (
	"github.com/servebench/servebench/internal/perfmodel"
)

// Terms are the parts of one forward pass's time, in seconds.
type Terms = perfmodel.Terms

// roofline evaluates the shared performance model (internal/perfmodel) for
// the plan's model, engine and layout on one device.
type roofline struct {
	p *planner
	d *Device
	m perfmodel.Model
}

func (p *planner) roofline(d *Device) roofline {
	return roofline{p: p, d: d, m: p.perfModel(d)}
}

// perfModel fills the shared model: per-device quantities are divided by
// the tensor-parallel degree; llama.cpp's layer split runs the devices one
// after another, so its time is that of one device holding everything.
func (p *planner) perfModel(d *Device) perfmodel.Model {
	s, split := p.s, 1
	if p.eng.tensorParallel {
		split = p.gpus
	}
	g := float64(split)
	dk, dv := s.HeadDimK, s.HeadDimV
	m := perfmodel.Model{
		Attention: perfmodel.Attention{FullLayers: s.count(LayerFull), SlidingLayers: s.count(LayerSliding), Window: s.Window},
		Rates: perfmodel.Rates{Bandwidth: d.Bandwidth() * p.opt.Eff.Bandwidth,
			FLOPS: d.FLOPS(p.computeClass(d)) * p.computeEff(d),
			Link:  d.InterconnectGBs.Value * 1e9 / 2 * p.opt.Eff.Interconnect},
		TokenFLOPs:       p.tokenFLOPs() / g,
		PrefillPairFLOPs: 2 * float64(s.Heads) * float64(dk+dv) / g,
		DecodePairFLOPs:  2 * float64(s.Heads) * float64(dk+dv) / g,
		KVLayerBytes:     float64(p.kv.layerTokenBytes()),
		StateBytes:       float64(p.kv.stateSeq()),
		TP:               split, Layers: s.Layers, Hidden: s.Hidden,
		AllReduceLatency: p.opt.Eff.AllReduceLatency,
		Overheads:        perfmodel.Overheads{Step: p.opt.Eff.StepOverhead, Request: p.opt.Eff.RequestOverhead},
		PrefillChunk:     p.eng.prefillChunk,
		PassPerSeq:       p.eng.passPerSeqCPU && d.Kind == KindCPU,
	}
	if s.MLA { // decode runs in the latent space, weights absorbed
		m.DecodePairFLOPs = 2 * float64(s.Heads) * float64(2*s.KVLoRARank+s.RopeDim) / g
	}
	p.weightSplit(&m, g)
	return m
}

// weightSplit sets the weight bytes a pass streams: dense weights, routed
// experts apart, and an untied input-embedding table not at all (a pass
// reads one row of it per token).
func (p *planner) weightSplit(m *perfmodel.Model, g float64) {
	s := p.s
	w := float64(p.weightBytes) / g
	if s.Experts > 0 && s.ExpertParams > 0 && s.Params > 0 {
		m.ExpertBytes = w * float64(s.ExpertParams) / float64(s.Params)
		m.Experts, m.ExpertsPerToken = s.Experts, s.ExpertsPerToken
		w -= m.ExpertBytes
	}
	if !s.Tied && s.EmbedParams > 0 {
		table := float64(s.EmbedParams) * p.embedBits() / 8 / g
		w -= table
		m.EmbedRowBytes = table / float64(max(1, s.Vocab))
	}
	m.WeightBytes = w
}

// embedBits is the embedding table's bits per weight: 16 for the formats
// that keep it so, else the format's average.
func (p *planner) embedBits() float64 {
	if p.format.KeepsEmbeddings16 || p.format.Bits >= 16 {
		return 16
	}
	return p.format.Bits
}

// tokenFLOPs is 2 x the active matrix parameters per token; the embedding
// lookup does no arithmetic (a tied table is the output head).
func (p *planner) tokenFLOPs() float64 {
	n := p.s.ActiveParams
	if !p.s.Tied {
		n -= p.s.EmbedParams
	}
	return 2 * float64(n)
}

// decode is one decode step for batch sequences at context ctx.
func (r roofline) decode(batch, ctx int64) Terms {
	return r.m.StepTerms(perfmodel.DecodeBatch(r.m, batch, ctx))
}

// prefill is one prompt of n tokens processed alone, in the engine's
// chunks, each its own step.
func (r roofline) prefill(n int64) Terms {
	var t Terms
	chunk := int64(max(1, r.m.PrefillChunk))
	for done := int64(0); done < n; done += chunk {
		t = t.Add(r.m.StepTerms(r.m.Chunk(done, min(chunk, n-done), false)))
	}
	return t
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

// computeClass is the tensor rate prefill runs at on device d. ggml's CUDA
// backend (llama.cpp, Ollama) multiplies 16-bit weights with cuBLAS in FP16
// with FP16 accumulate, and quantized weights with its MMQ kernels on int8
// tensor cores, which reach about the same rate (llama.cpp#7676); GeForce
// parts run FP16 accumulate at twice their FP32-accumulate rate. Other
// backends (ROCm, Metal, CPU) keep the BF16 rate and the common efficiency.
func (p *planner) computeClass(d *Device) string {
	if p.format.Compute == "bf16" && p.eng.fp16Accumulate && d.Kind == KindGPU && d.Vendor == "NVIDIA" {
		return "fp16acc"
	}
	return p.format.Compute
}

// computeEff is the prefill efficiency on device d: the engine's own on the
// FP16-accumulate rate where it has one, else the common factor.
func (p *planner) computeEff(d *Device) float64 {
	if p.opt.Eff.ComputeFP16Acc > 0 && p.computeClass(d) == "fp16acc" {
		return p.opt.Eff.ComputeFP16Acc
	}
	return p.opt.Eff.Compute
}
