package perfmodel

import "math"

// Batch is the work of one engine step: a sum of Chunk values, one per
// sequence scheduled in the step. Attention quantities are in layer units
// (summed over attention layers), so sliding windows cap them exactly.
type Batch struct {
	Tokens        int64   // tokens run through the model: decodes + prefill tokens
	Seqs          int64   // sequences in the step
	Decodes       int64   // sequences decoding one token
	PrefillTokens int64   // prompt (or recomputed) tokens in the step
	CachedTokens  int64   // Σ tokens already cached per sequence (before windows)
	KVLayerTokens float64 // KV entries read and written, summed over attention layers
	DecodePairs   float64 // (query, key) pairs of decoding tokens, summed over layers
	PrefillPairs  float64 // (query, key) pairs of prefill tokens, summed over layers
}

// Add accumulates o into b.
func (b *Batch) Add(o Batch) {
	b.Tokens += o.Tokens
	b.Seqs += o.Seqs
	b.Decodes += o.Decodes
	b.PrefillTokens += o.PrefillTokens
	b.CachedTokens += o.CachedTokens
	b.KVLayerTokens += o.KVLayerTokens
	b.DecodePairs += o.DecodePairs
	b.PrefillPairs += o.PrefillPairs
}

// Scale multiplies every count by f (a batch of f identical sequences).
func (b Batch) Scale(f float64) Batch {
	r := func(n int64) int64 { return int64(math.Round(float64(n) * f)) }
	return Batch{Tokens: r(b.Tokens), Seqs: r(b.Seqs), Decodes: r(b.Decodes), PrefillTokens: r(b.PrefillTokens),
		CachedTokens: r(b.CachedTokens), KVLayerTokens: b.KVLayerTokens * f, DecodePairs: b.DecodePairs * f, PrefillPairs: b.PrefillPairs * f}
}

// Attention is how a model's layers cache: full layers see the whole
// context, sliding layers the last Window tokens.
type Attention struct {
	FullLayers    int
	SlidingLayers int
	Window        int
}

// layers counts the attention layers.
func (a Attention) layers() float64 { return float64(a.FullLayers + a.SlidingLayers) }

// attended is the cached entries one query at position ctx reads, summed
// over attention layers.
func (a Attention) attended(ctx int64) float64 {
	return float64(a.FullLayers)*float64(ctx) + float64(a.SlidingLayers)*float64(min(ctx, int64(a.Window)))
}

// pairs is Σ attended(p) for p = 1..n: the causal pairs of a prompt of n
// tokens, summed over layers.
func (a Attention) pairs(n int64) float64 {
	tri := func(k int64) float64 { return float64(k) * float64(k+1) / 2 }
	slide := tri(n)
	if w := int64(a.Window); n > w {
		slide = tri(w) + float64(n-w)*float64(w)
	}
	return float64(a.FullLayers)*tri(n) + float64(a.SlidingLayers)*slide
}

// Chunk is the work of one sequence computing q new tokens after cached
// ones: a decode when q is 1 and the sequence is generating, otherwise a
// prefill chunk (the first of a prompt has cached 0).
func (a Attention) Chunk(cached, q int64, decode bool) Batch {
	b := Batch{Tokens: q, Seqs: 1, CachedTokens: cached,
		KVLayerTokens: a.attended(cached) + float64(q)*a.layers()}
	p := a.pairs(cached+q) - a.pairs(cached)
	if decode {
		b.Decodes, b.DecodePairs = 1, p
	} else {
		b.PrefillTokens, b.PrefillPairs = q, p
	}
	return b
}
