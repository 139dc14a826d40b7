package perfmodel

// StepTimer is what a scheduler needs of a performance model: the batch of
// one sequence's work in a step, the step's duration, and the time a
// request spends outside engine steps. Model (a roofline) and Fitted (an
// engine-agnostic model fitted to a measured run) implement it.
type StepTimer interface {
	// Chunk is the work of one sequence computing q tokens after cached
	// ones (decode: q is 1 and the sequence is generating).
	Chunk(cached, q int64, decode bool) Batch
	// StepTime is one engine step's duration in seconds.
	StepTime(b Batch) float64
	// RequestTime is the seconds a request spends outside engine steps
	// before its first token reaches the client.
	RequestTime() float64
}

// PrefillTime is a lone prompt of n tokens run in chunks of at most chunk
// tokens on an idle engine, each chunk its own step.
func PrefillTime(t StepTimer, n int64, chunk int) float64 {
	chunk = max(chunk, 1)
	var total float64
	for done := int64(0); done < n; {
		q := min(n-done, int64(chunk))
		total += t.StepTime(t.Chunk(done, q, false))
		done += q
	}
	return total
}

// IdleTTFT is the time to first token of a lone request on an idle engine:
// the request overhead and the prompt's prefill, whose last step samples
// the first token.
func IdleTTFT(t StepTimer, n int64, chunk int) float64 {
	return t.RequestTime() + PrefillTime(t, n, chunk)
}

// DecodeBatch is the work of batch sequences decoding one token each, each
// with ctx tokens cached.
func DecodeBatch(t StepTimer, batch, ctx int64) Batch {
	return t.Chunk(ctx, 1, true).Scale(float64(batch))
}

// Fitted is an engine-agnostic step-time model whose coefficients come
// from a measured run rather than from the model's shape and the device
// (the form published simulators fit; docs/PLANNER.md):
//
//	step = Fixed + max(Weights, PerToken·Tokens) + PerKVToken·KVLayerTokens
//	       + PerPair·PrefillPairs + PerSeq·Seqs
//
// With its Attention left at one full layer, KVLayerTokens are the cached
// tokens read (and written) and PrefillPairs the causal pairs of prompts.
type Fitted struct {
	Attention
	Fixed      float64 // seconds per step (host overhead)
	Weights    float64 // seconds to stream the weights once
	PerToken   float64 // seconds per token computed (prefill's compute roof)
	PerKVToken float64 // seconds per cached token read
	PerPair    float64 // seconds per prefill attention pair
	PerSeq     float64 // seconds per sequence in the step
	Request    float64 // seconds per request outside steps (RequestTime)
}

// StepTime implements StepTimer.
func (f Fitted) StepTime(b Batch) float64 {
	return f.Fixed + max(f.Weights, f.PerToken*float64(b.Tokens)) + f.PerKVToken*b.KVLayerTokens +
		f.PerPair*b.PrefillPairs + f.PerSeq*float64(b.Seqs)
}

// RequestTime implements StepTimer.
func (f Fitted) RequestTime() float64 { return f.Request }

// Chunk implements StepTimer; a zero Attention counts one full layer.
func (f Fitted) Chunk(cached, q int64, decode bool) Batch {
	a := f.Attention
	if a.FullLayers+a.SlidingLayers == 0 {
		a.FullLayers = 1
	}
	return a.Chunk(cached, q, decode)
}
