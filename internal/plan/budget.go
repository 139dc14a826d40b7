package plan

// Budget is the memory one device needs, by component.
type Budget struct {
	GPUs            int     `json:"gpus"`
	Weights         int64   `json:"weights_bytes"`
	KVPerToken      int64   `json:"kv_bytes_per_token"`
	KVTokens        int64   `json:"kv_tokens"`
	KVNote          string  `json:"kv_note"`
	KV              int64   `json:"kv_bytes"`
	State           int64   `json:"state_bytes"`
	Activation      int64   `json:"activation_bytes"`
	ActivationBasis string  `json:"activation_basis"`
	Runtime         int64   `json:"runtime_bytes"`
	RuntimeBasis    string  `json:"runtime_basis"`
	Headroom        int64   `json:"headroom_bytes"`
	HeadroomPct     float64 `json:"headroom_pct"`
	Total           int64   `json:"total_bytes"`
}

// budget is the memory on each of the plan's devices for seqs sequences of
// ctx tokens. Headroom is a fraction of the total, so that the total fits
// exactly when the rest fits in (1 - headroom) of the device, which is
// vLLM's gpu_memory_utilization rule.
func (p *planner) budget(d *Device, ctx, seqs int64) Budget {
	g := int64(p.gpus)
	a := p.kv.alloc(ctx, seqs)
	b := Budget{GPUs: p.gpus, Weights: p.weightBytes / g, KVPerToken: p.kv.PerToken(),
		KVTokens: a.Tokens, KVNote: a.Note, KV: a.KV, State: a.State, HeadroomPct: 100 * p.opt.Headroom}
	if !p.eng.tensorParallel {
		// Layers are split across devices: each holds its share of them.
		b.KVPerToken, b.KV, b.State = b.KVPerToken/g, b.KV/g, b.State/g
	}
	b.Activation, b.ActivationBasis = p.eng.activation(p.s, a.PerSeq)
	b.Runtime, b.RuntimeBasis = p.eng.runtime(d, p.gpus)
	sum := b.Weights + b.KV + b.State + b.Activation + b.Runtime
	b.Total = int64(float64(sum) / (1 - p.opt.Headroom))
	if p.eng.kvOfFree {
		// TensorRT-LLM keeps the headroom share of the memory left after
		// weights, activations and runtime: the KV cache (and state) is
		// at most (1 - headroom) of it.
		b.Total = sum - b.KV - b.State + int64(float64(b.KV+b.State)/(1-p.opt.Headroom))
	}
	b.Headroom = b.Total - sum
	return b
}

// fits reports whether seqs sequences of ctx tokens fit on d.
func (p *planner) fits(d *Device, ctx, seqs int64) bool {
	return p.budget(d, ctx, seqs).Total <= d.Usable()
}

// maxSeqs is the most sequences of ctx tokens that fit on d (0 if none).
func (p *planner) maxSeqs(d *Device, ctx int64) int64 {
	return searchMax(1, 1<<24, func(n int64) bool { return p.fits(d, ctx, n) })
}

// maxContext is the longest context for seqs sequences that fits on d,
// capped at the model's maximum; 0 if none.
func (p *planner) maxContext(d *Device, seqs int64) int64 {
	hi := int64(p.s.MaxContext)
	if hi <= 0 {
		hi = 1 << 24
	}
	return searchMax(1, hi, func(n int64) bool { return p.fits(d, n, seqs) })
}

// searchMax returns the largest n in [lo, hi] with ok(n), ok monotone
// decreasing; 0 when ok(lo) is false.
func searchMax(lo, hi int64, ok func(int64) bool) int64 {
	if !ok(lo) {
		return 0
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
