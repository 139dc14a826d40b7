package plan

import "fmt"

// kvModel computes KV-cache and recurrent-state sizes for one model, KV
// type, engine and GPU count.
type kvModel struct {
	s      *Shape
	t      KVType
	e      engineSpec
	shards int // GPUs sharing the KV heads (vLLM TP); 1 for layer split
	// stateBytes is bytes per state element: vLLM keeps Mamba state in the
	// model dtype, llama.cpp always in F32.
	stateBytes int64
}

func newKVModel(s *Shape, t KVType, e engineSpec, gpus int) kvModel {
	m := kvModel{s: s, t: t, e: e, shards: 1, stateBytes: 4}
	if e.tensorParallel {
		m.shards, m.stateBytes = gpus, 2
	}
	return m
}

// layerTokenBytes is the KV of one token in one attention layer on one
// shard. llama.cpp stores K and V rows separately, each in whole blocks.
func (m kvModel) layerTokenBytes() int64 {
	if m.s.MLA {
		return m.t.Bytes(int64(m.s.KVLoRARank + m.s.RopeDim))
	}
	heads := int64(m.s.KVElemsPerLayer(m.shards)) / int64(m.s.HeadDimK+m.s.HeadDimV)
	return m.t.Bytes(heads*int64(m.s.HeadDimK)) + m.t.Bytes(heads*int64(m.s.HeadDimV))
}

// PerToken is the KV bytes one token adds across all attention layers
// (sliding layers included: until the window fills they grow alike).
func (m kvModel) PerToken() int64 {
	return int64(m.s.AttentionLayers()) * m.layerTokenBytes()
}

// stateSeq is the recurrent state of one sequence, all state layers.
func (m kvModel) stateSeq() int64 {
	n := int64(m.s.count(LayerState)) * m.s.StateElems * m.stateBytes
	return n / int64(m.shards) // Mamba's inner dimension is split across TP ranks
}

// seqBytes is one sequence's cache at ctx tokens: full layers hold ctx,
// sliding layers at most the window, state layers their constant state.
func (m kvModel) seqBytes(ctx int64) int64 {
	full := int64(m.s.count(LayerFull)) * ctx
	slide := int64(m.s.count(LayerSliding)) * min(ctx, int64(m.s.Window))
	return (full+slide)*m.layerTokenBytes() + m.stateSeq()
}

// Alloc is what an engine reserves for seqs sequences of ctx tokens.
type Alloc struct {
	// Tokens is tokens per sequence (vLLM, block-rounded) or KV cells in
	// all (llama.cpp); PerSeq is the tokens or cells one sequence holds.
	Tokens int64
	PerSeq int64
	KV     int64 // attention KV bytes
	State  int64 // recurrent state bytes
	Note   string
}

// alloc applies the engine's allocation rule.
func (m kvModel) alloc(ctx, seqs int64) Alloc {
	if m.e.paged {
		tokens := roundUp(ctx, vllmBlockTokens)
		return Alloc{Tokens: tokens, PerSeq: tokens, KV: seqs * (m.seqBytes(tokens) - m.stateSeq()), State: seqs * m.stateSeq(),
			Note: fmt.Sprintf("%d seqs x %s tokens in %d-token blocks", seqs, FormatInt(tokens), vllmBlockTokens)}
	}
	perSeq := llamaCellsPerSeq(ctx, seqs)
	cells := perSeq * seqs
	// llama.cpp's SWA cache per slot: min(cells, window + n_ubatch), padded
	// to 256 (llama-kv-cache-iswa.cpp, one stream per slot).
	swa := min(perSeq, roundUp(int64(m.s.Window)+llamaUBatch, llamaCellPad)) * seqs
	kv := (int64(m.s.count(LayerFull))*cells + int64(m.s.count(LayerSliding))*swa) * m.layerTokenBytes()
	return Alloc{Tokens: cells, PerSeq: perSeq, KV: kv, State: seqs * m.stateSeq(),
		Note: fmt.Sprintf("%s cells = %d slots x %s, each padded to %d", FormatInt(cells), seqs, FormatInt(perSeq), llamaCellPad)}
}

// llamaCellsPerSeq follows llama_context: n_ctx = pad(ctx x slots, 256),
// then with one KV stream per slot (kv_unified = false, as Ollama runs it)
// n_ctx_seq = pad(n_ctx / slots, 256).
func llamaCellsPerSeq(ctx, seqs int64) int64 {
	total := roundUp(ctx*seqs, llamaCellPad)
	return roundUp(total/seqs, llamaCellPad)
}

func roundUp(n, to int64) int64 { return ceilDiv64(n, to) * to }
