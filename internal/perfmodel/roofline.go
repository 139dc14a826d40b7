package perfmodel

import "math"

// Rates are a device's achieved rates: its peaks times the efficiencies.
type Rates struct {
	Bandwidth float64 // memory bytes/s
	FLOPS     float64 // tensor FLOP/s at the weights' compute precision
	Link      float64 // interconnect bytes/s in one direction (tensor parallelism)
}

// Model is the roofline step-time model of one model on one device (one
// tensor-parallel rank: every per-device quantity is already divided by
// the TP degree). Its zero value is not usable; the planner and the
// simulator each fill one from their inputs.
type Model struct {
	Attention
	Rates Rates

	// WeightBytes is what one pass streams of the dense weights. The
	// untied input-embedding table is not in it: a pass reads one row per
	// token (EmbedRowBytes), not the table. A tied table is the output
	// head and is read whole.
	WeightBytes   float64
	EmbedRowBytes float64
	// ExpertBytes are the routed experts' bytes (not in WeightBytes): a
	// pass over n tokens reads the share 1 - (1 - k/E)^n of them.
	ExpertBytes              float64
	Experts, ExpertsPerToken int

	TokenFLOPs       float64 // 2 x active matrix parameters per token
	DecodePairFLOPs  float64 // attention FLOPs per (query, key) pair and layer, decoding
	PrefillPairFLOPs float64 // the same for prefill (differs for MLA)
	KVLayerBytes     float64 // one token's K and V in one attention layer
	StateBytes       float64 // recurrent state per sequence, read and written each step

	// TP is the tensor-parallel degree: two all-reduces per layer of
	// tokens x Hidden 16-bit values when above 1.
	TP, Layers, Hidden int
	AllReduceLatency   float64

	Overheads
	// PrefillChunk is the most prompt tokens one pass takes (vLLM's
	// max_num_batched_tokens, llama.cpp's n_ubatch).
	PrefillChunk int
	// PassPerSeq: a step of B sequences costs B single-sequence passes
	// (Ollama on a host CPU, one KV stream per slot).
	PassPerSeq bool
}

// Terms are the parts of one pass's time, in seconds.
type Terms struct {
	Memory   float64 `json:"memory_s"`
	Compute  float64 `json:"compute_s"`
	Comm     float64 `json:"interconnect_s"`
	Overhead float64 `json:"overhead_s"`
}

// Total is the pass time: memory and compute overlap, the rest adds.
func (t Terms) Total() float64 { return max(t.Memory, t.Compute) + t.Comm + t.Overhead }

// Scale multiplies every term by f.
func (t Terms) Scale(f float64) Terms {
	return Terms{Memory: t.Memory * f, Compute: t.Compute * f, Comm: t.Comm * f, Overhead: t.Overhead * f}
}

// Add sums two passes' terms.
func (t Terms) Add(o Terms) Terms {
	return Terms{Memory: t.Memory + o.Memory, Compute: t.Compute + o.Compute, Comm: t.Comm + o.Comm, Overhead: t.Overhead + o.Overhead}
}

// Bound names the largest term as a limit; compute is "CPU" on a host CPU.
func (t Terms) Bound(cpu bool) string {
	compute := "compute"
	if cpu {
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

// StepTerms is the roofline of one step.
func (m Model) StepTerms(b Batch) Terms {
	if m.PassPerSeq && b.Seqs > 1 {
		return m.StepTerms(b.Scale(1 / float64(b.Seqs))).Scale(float64(b.Seqs))
	}
	bytes := m.WeightsRead(b.Tokens) + float64(b.Tokens)*m.EmbedRowBytes +
		b.KVLayerTokens*m.KVLayerBytes + float64(b.Seqs)*m.StateBytes
	flops := float64(b.Tokens)*m.TokenFLOPs + b.DecodePairs*m.DecodePairFLOPs + b.PrefillPairs*m.PrefillPairFLOPs
	return Terms{Memory: bytes / m.Rates.Bandwidth, Compute: flops / m.Rates.FLOPS,
		Comm: m.AllReduce(b.Tokens), Overhead: m.Step}
}

// StepTime is StepTerms' total: Model is a StepTimer.
func (m Model) StepTime(b Batch) float64 { return m.StepTerms(b).Total() }

// RequestTime is the per-request overhead outside engine steps.
func (m Model) RequestTime() float64 { return m.Request }

// WeightsRead is the weight bytes a pass over n tokens streams: the dense
// weights once, and of the routed experts the expected share n tokens
// touch, 1 - (1 - k/E)^n.
func (m Model) WeightsRead(n int64) float64 {
	if m.Experts == 0 || m.ExpertBytes == 0 {
		return m.WeightBytes
	}
	touched := 1 - math.Pow(1-float64(m.ExpertsPerToken)/float64(m.Experts), float64(n))
	return m.WeightBytes + m.ExpertBytes*touched
}

// AllReduce is the tensor-parallel communication of a pass over n tokens:
// two ring all-reduces per layer of n x Hidden 16-bit values, each with a
// fixed latency.
func (m Model) AllReduce(n int64) float64 {
	if m.TP <= 1 {
		return 0
	}
	if m.Rates.Link <= 0 {
		return math.Inf(1)
	}
	g := float64(m.TP)
	bytes := float64(n) * float64(m.Hidden) * 2
	return 2 * float64(m.Layers) * (m.AllReduceLatency + 2*(g-1)/g*bytes/m.Rates.Link)
}
