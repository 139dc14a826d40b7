package sim

import (
	"math"
	"time"
)

// Batch is what one engine step computes, the input of the step-time model.
type Batch struct {
	// Tokens is the number of tokens run through the model: one per
	// decoding sequence plus every prefill token in the step.
	Tokens int64
	// KVRead is the number of cached tokens whose K and V are read, summed
	// over the sequences in the step.
	KVRead int64
	// AttnPairs is the number of causal query–key pairs: c+1 for a decode
	// token after c cached tokens, q·c + q(q+1)/2 for a q-token prefill chunk.
	AttnPairs int64
}

// StepTime is the model time of one engine step:
//
//	compute = (2·params·Tokens + 4·layers·heads·head_dim·AttnPairs) / (FLOP/s · compute_efficiency)
//	memory  = (weight bytes + KV bytes/token · (KVRead + Tokens)) / (bandwidth · bandwidth_efficiency)
//	step    = max(compute, memory) + step_overhead
//
// Prefill steps are compute-bound, decode steps bandwidth-bound.
func (c Config) StepTime(b Batch) time.Duration { return seconds(c.stepSeconds(b)) }

func (c Config) stepSeconds(b Batch) float64 {
	compute, memory := c.roofs(b)
	return math.Max(compute, memory) + c.Device.StepOverheadMS/1e3
}

// roofs returns a batch's compute time and memory time, in seconds.
func (c Config) roofs(b Batch) (compute, memory float64) {
	m, d := c.Model, c.Device
	flops := 2*m.Params*float64(b.Tokens) +
		4*float64(m.Layers)*float64(c.heads()*m.HeadDim)*float64(b.AttnPairs)
	compute = flops / (d.PeakTFLOPS * 1e12 * d.ComputeEfficiency)
	bytes := c.WeightBytes() + c.KVBytesPerToken()*float64(b.KVRead+b.Tokens)
	memory = bytes / (d.MemBandwidthGBs * 1e9 * d.BandwidthEfficiency)
	return compute, memory
}

// DecodeStepTime is the model time of a step that decodes one token for each
// of batch sequences holding kvTokens cached tokens in all.
func (c Config) DecodeStepTime(batch, kvTokens int) time.Duration {
	return c.StepTime(Batch{Tokens: int64(batch), KVRead: int64(kvTokens),
		AttnPairs: int64(kvTokens) + int64(batch)})
}

// PrefillTime is the model time to prefill a lone prompt of tokens tokens in
// chunks of max_num_batched_tokens: the TTFT of a request on an idle server.
func (c Config) PrefillTime(tokens int) time.Duration {
	var total float64
	for done := 0; done < tokens; {
		q := min(tokens-done, c.Engine.MaxNumBatchedTokens)
		total += c.stepSeconds(prefillChunk(done, q))
		done += q
	}
	return seconds(total)
}

// prefillChunk is the batch of a q-token prefill chunk after c cached tokens.
func prefillChunk(c, q int) Batch {
	cc, qq := int64(c), int64(q)
	return Batch{Tokens: qq, KVRead: cc, AttnPairs: qq*cc + qq*(qq+1)/2}
}

// Wall converts model time to the wall time a client measures.
func (c Config) Wall(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.TimeScale)
}

func (c Config) heads() int {
	if c.Model.Heads > 0 {
		return c.Model.Heads
	}
	return max(1, c.Model.Hidden/c.Model.HeadDim)
}

// WeightBytes is the size of the model's weights.
func (c Config) WeightBytes() float64 { return c.Model.Params * c.Model.BytesPerWeight }

// KVBytesPerToken is K and V for every layer and KV head.
func (c Config) KVBytesPerToken() float64 {
	m := c.Model
	return 2 * float64(m.Layers) * float64(m.KVHeads) * float64(m.HeadDim) * m.BytesPerKV
}

// kvBlocks is the number of KV blocks: engine.kv_tokens, or what device
// memory × utilisation holds after the weights.
func (c Config) kvBlocks() int {
	bs := c.Engine.BlockSize
	if c.Engine.KVTokens > 0 {
		return c.Engine.KVTokens / bs
	}
	free := c.Device.MemoryGiB*(1<<30)*c.Device.MemoryUtilization - c.WeightBytes()
	tokens := free / c.KVBytesPerToken()
	if !(tokens > 0) {
		return 0
	}
	return int(math.Min(tokens/float64(bs), 1<<40))
}

// KVCapacityTokens is the KV cache size in tokens (whole blocks).
func (c Config) KVCapacityTokens() int { return c.kvBlocks() * c.Engine.BlockSize }

// EffectiveMaxModelLen is model.max_model_len capped at the KV capacity.
func (c Config) EffectiveMaxModelLen() int { return min(c.Model.MaxModelLen, c.KVCapacityTokens()) }

// Derived are the figures that follow from a Config, in model time.
type Derived struct {
	WeightBytes      float64
	KVBytesPerToken  float64
	KVBlocks         int
	KVCapacityTokens int
	MaxModelLen      int
	// Batch1Decode is one decode step of a lone sequence with an empty
	// cache; Batch1DecodeTPS is its inverse.
	Batch1Decode    time.Duration
	Batch1DecodeTPS float64
	// PrefillTPS is the throughput of a full-budget prefill step
	// (max_num_batched_tokens fresh tokens).
	PrefillTPS float64
	// TTFT512 is the TTFT of a 512-token prompt on an idle server.
	TTFT512 time.Duration
	// DecodeBound and PrefillBound say which roof limits each.
	DecodeBound, PrefillBound string
}

// Derived computes the derived figures.
func (c Config) Derived() Derived {
	b1 := c.DecodeStepTime(1, 0)
	budget := c.Engine.MaxNumBatchedTokens
	full := c.stepSeconds(prefillChunk(0, budget))
	return Derived{
		WeightBytes: c.WeightBytes(), KVBytesPerToken: c.KVBytesPerToken(),
		KVBlocks: c.kvBlocks(), KVCapacityTokens: c.KVCapacityTokens(),
		MaxModelLen: c.EffectiveMaxModelLen(), Batch1Decode: b1,
		Batch1DecodeTPS: 1 / b1.Seconds(), PrefillTPS: float64(budget) / full,
		TTFT512:      c.PrefillTime(512),
		DecodeBound:  c.bound(Batch{Tokens: 1, AttnPairs: 1}),
		PrefillBound: c.bound(prefillChunk(0, budget)),
	}
}

// bound names the roof that limits a batch.
func (c Config) bound(b Batch) string {
	if compute, memory := c.roofs(b); compute >= memory {
		return "compute-bound"
	}
	return "bandwidth-bound"
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
