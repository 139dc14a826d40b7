package perfmodel

// vLLM's memory rule: at startup it profiles a forward pass and sizes the
// KV pool as gpu_memory_utilization x memory - weights - activation peak -
// non-torch memory, in whole blocks.
const (
	// VLLMBlockTokens is vLLM's KV block size (--block-size default).
	VLLMBlockTokens = 16
	// VLLMProfileTokens is max_num_batched_tokens, the tokens of the
	// profile run; 8192 is the default on large GPUs.
	VLLMProfileTokens = 8192
	// VLLMProfileSeqs is the sequences whose fp32 logits the profile
	// run's sampler holds; with the tokens above it reproduces the 1.26 GiB
	// activation peak vLLM logs for Llama-3-8B on an H100 (vllm#10511).
	VLLMProfileSeqs = 256
	// VLLMNonTorchGiB is non-torch memory (CUDA context, cuBLAS, NCCL):
	// 1.79 GiB at TP 1 and 3.58 GiB at TP 2 in the same log.
	VLLMNonTorchGiB = 1.8
)

// VLLMActivation is the profile run's activation peak per GPU: MLP
// intermediates and hidden states in 16-bit for VLLMProfileTokens tokens,
// plus fp32 logits of VLLMProfileSeqs sequences. It is not divided by the
// TP degree: vLLM logs the same peak at TP 1, 2 and 4.
func VLLMActivation(hidden, intermediate, vocab int64) int64 {
	return VLLMProfileTokens*(3*intermediate+8*hidden)*2 + VLLMProfileSeqs*vocab*4
}

// VLLMNonTorch is the non-torch memory per GPU at a TP degree.
func VLLMNonTorch(tp int) int64 {
	n := VLLMNonTorchGiB
	if tp > 1 {
		n *= 2
	}
	return int64(n * (1 << 30))
}

// VLLMPoolTokens is the KV pool per GPU in tokens: what is left of budget
// bytes (usable memory x utilization) after weights, activation and runtime,
// in whole blocks of block tokens at kvPerToken bytes each.
func VLLMPoolTokens(budget, weights, activation, runtime, kvPerToken float64, block int64) int64 {
	pool := budget - weights - activation - runtime
	if pool <= 0 || kvPerToken <= 0 || block <= 0 {
		return 0
	}
	return int64(pool/(kvPerToken*float64(block))) * block
}
