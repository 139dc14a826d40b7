package sim

import (
	"github.com/servebench/servebench/internal/perfmodel"
	"math"
	"time"
)

// Batch is what one engine step computes, the input of the step-time
// model (internal/perfmodel, shared with the planner).
type Batch = perfmodel.Batch

// Perf is the performance model the simulator runs on: the roofline of
// internal/perfmodel filled from this configuration, unless Timer is set.
func (c Config) Perf() perfmodel.StepTimer {
	if c.Timer != nil {
		return c.Timer
	}
	return c.Roofline()
}

// Roofline is the shared roofline model of the configured model on the
// configured device, as the planner builds it for the same inputs: the
// weights a pass streams leave out an untied input-embedding table (one
// row per token is read), and compute counts 2 FLOPs per matrix weight.
func (c Config) Roofline() perfmodel.Model {
	m, d := c.Model, c.Device
	embed := float64(m.Vocab) * float64(m.Hidden)
	weights, matrix := c.WeightBytes(), m.Params
	var row float64
	if !m.TiedEmbeddings && embed > 0 {
		weights -= embed * m.BytesPerWeight
		matrix -= embed
		row = float64(m.Hidden) * m.BytesPerWeight
	}
	pair := 2 * float64(c.heads()) * float64(2*m.HeadDim)
	return perfmodel.Model{
		Attention:   perfmodel.Attention{FullLayers: m.Layers},
		Rates:       perfmodel.Rates{Bandwidth: d.MemBandwidthGBs * 1e9 * d.BandwidthEfficiency, FLOPS: d.PeakTFLOPS * 1e12 * d.ComputeEfficiency},
		WeightBytes: weights, EmbedRowBytes: row, TokenFLOPs: 2 * matrix,
		DecodePairFLOPs: pair, PrefillPairFLOPs: pair,
		KVLayerBytes: 2 * float64(m.KVHeads) * float64(m.HeadDim) * m.BytesPerKV,
		TP:           1, Layers: m.Layers, Hidden: m.Hidden,
		Overheads:    perfmodel.Overheads{Step: d.StepOverheadMS / 1e3, Request: c.Engine.RequestOverheadMS / 1e3},
		PrefillChunk: c.Engine.MaxNumBatchedTokens,
	}
}

// StepTime is the model time of one engine step.
func (c Config) StepTime(b Batch) time.Duration { return seconds(c.Perf().StepTime(b)) }

func (c Config) stepSeconds(b Batch) float64 { return c.Perf().StepTime(b) }

// DecodeStepTime is the model time of a step that decodes one token for each
// of batch sequences holding kvTokens cached tokens in all.
func (c Config) DecodeStepTime(batch, kvTokens int) time.Duration {
	t := c.Perf()
	var b Batch
	for i := range batch {
		share := kvTokens / batch
		if i < kvTokens%batch {
			share++
		}
		b.Add(t.Chunk(int64(share), 1, true))
	}
	return seconds(t.StepTime(b))
}

// PrefillTime is the model time to prefill a lone prompt of tokens tokens in
// chunks of max_num_batched_tokens (without the request overhead).
func (c Config) PrefillTime(tokens int) time.Duration {
	return seconds(perfmodel.PrefillTime(c.Perf(), int64(tokens), c.Engine.MaxNumBatchedTokens))
}

// IdleTTFT is the TTFT of a lone request on an idle server: the request
// overhead and the prompt's prefill.
func (c Config) IdleTTFT(tokens int) time.Duration {
	return seconds(perfmodel.IdleTTFT(c.Perf(), int64(tokens), c.Engine.MaxNumBatchedTokens))
}

// prefillChunk is the batch of a q-token prefill chunk after c cached tokens.
func (c Config) prefillChunk(cached, q int) Batch {
	return c.Perf().Chunk(int64(cached), int64(q), false)
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

// kvBlocks is the number of KV blocks: engine.kv_tokens, or vLLM's memory
// rule (internal/perfmodel, as the planner applies it): memory x
// utilisation less the weights, the profile run's activation peak and the
// non-torch memory.
func (c Config) kvBlocks() int {
	bs := c.Engine.BlockSize
	if c.Engine.KVTokens > 0 {
		return c.Engine.KVTokens / bs
	}
	m := c.Model
	act := perfmodel.VLLMActivation(int64(m.Hidden), int64(m.Intermediate), int64(m.Vocab))
	tokens := perfmodel.VLLMPoolTokens(c.Device.MemoryGiB*(1<<30)*c.Device.MemoryUtilization, c.WeightBytes(),
		float64(act), float64(perfmodel.VLLMNonTorch(1)), c.KVBytesPerToken(), 1)
	return int(min(tokens/int64(bs), 1<<40))
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
	// TTFT512 is the TTFT of a 512-token prompt on an idle server,
	// request overhead included.
	TTFT512 time.Duration
	// DecodeBound and PrefillBound say which roof limits each.
	DecodeBound, PrefillBound string
}

// Derived computes the derived figures.
func (c Config) Derived() Derived {
	b1 := c.DecodeStepTime(1, 0)
	budget := c.Engine.MaxNumBatchedTokens
	full := c.stepSeconds(c.prefillChunk(0, budget))
	return Derived{
		WeightBytes: c.WeightBytes(), KVBytesPerToken: c.KVBytesPerToken(),
		KVBlocks: c.kvBlocks(), KVCapacityTokens: c.KVCapacityTokens(),
		MaxModelLen: c.EffectiveMaxModelLen(), Batch1Decode: b1,
		Batch1DecodeTPS: 1 / b1.Seconds(), PrefillTPS: float64(budget) / full,
		TTFT512:      c.IdleTTFT(512),
		DecodeBound:  c.bound(c.Roofline().Chunk(0, 1, true)),
		PrefillBound: c.bound(c.prefillChunk(0, budget)),
	}
}

// bound names the roof that limits a batch.
func (c Config) bound(b Batch) string {
	if t := c.Roofline().StepTerms(b); t.Compute >= t.Memory {
		return "compute-bound"
	}
	return "bandwidth-bound"
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
