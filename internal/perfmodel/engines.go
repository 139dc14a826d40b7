package perfmodel

import "strings"

// Overheads are the host times the roofline does not see.
type Overheads struct {
	// Step is host time per engine step (scheduling, sampling, kernel
	// launches that CUDA graphs do not hide), in seconds.
	Step float64 `json:"step_overhead_s"`
	// Request is time per request outside engine steps: the API server,
	// chat template, tokenization and streaming the first chunk, in
	// seconds. It adds to every TTFT and takes no engine time.
	Request float64 `json:"request_overhead_s"`
}

// Engine is one inference engine's overheads and prefill compute
// efficiency, each with its basis.
type Engine struct {
	Name, Title string
	Overheads
	StepBasis, RequestBasis string
	// CUDAComputeEff is the fraction of an NVIDIA GPU's FP16-accumulate
	// tensor rate the engine's prefill reaches, where measured apart from
	// DefaultComputeEff; 0 = not measured.
	CUDAComputeEff float64
	ComputeBasis   string
}

// Engine names.
const (
	VLLM     = "vllm"
	SGLang   = "sglang"
	TRTLLM   = "trtllm"
	NIM      = "nim"
	LlamaCpp = "llamacpp"
	Ollama   = "ollama"
)

// engines holds each engine's overheads. The datacenter engines' values are
// fitted to the published measurements in internal/perfmodel/testdata
// (published.yaml): the step overhead to the batch-1 decode time left over
// after streaming the weights, the request overhead to the concurrency-1
// (or lightest) TTFT left over after the prompt's prefill.
var engines = map[string]Engine{
	VLLM: {Name: VLLM, Title: "vLLM", Overheads: Overheads{Step: 1.6e-3, Request: 50e-3},
		StepBasis:    "GPUStack Qwen3-8B H100, vLLM v0.11.0: TPOT 7.28 ms at concurrency 1 minus the roofline's 5.65 ms",
		RequestBasis: "GPUStack Qwen3-8B H100, vLLM v0.11.0: TTFT 59.0 ms at concurrency 1 minus the 233-token prefill (7.5 ms) and one step"},
	SGLang: {Name: SGLang, Title: "SGLang", Overheads: Overheads{Step: 1.4e-3, Request: 18e-3},
		StepBasis:    "GPUStack Qwen3-8B H100, SGLang: TPOT 7.19 ms at concurrency 4 minus the roofline and prefill interference",
		RequestBasis: "GPUStack Qwen3-8B H100, SGLang: TTFT 27.7 ms at concurrency 4 minus the predicted prefill and queueing"},
	TRTLLM: {Name: TRTLLM, Title: "TensorRT-LLM", Overheads: Overheads{Step: 1.8e-3, Request: 40e-3},
		StepBasis:    "GPUStack Qwen3-8B H100, TensorRT-LLM: TPOT 7.67 ms at concurrency 4 minus the roofline and prefill interference",
		RequestBasis: "GPUStack Qwen3-8B H100, TensorRT-LLM: TTFT 51.6 ms at concurrency 4 minus the predicted prefill and queueing"},
	NIM: {Name: NIM, Title: "NVIDIA NIM", Overheads: Overheads{Step: 1.8e-3, Request: 6e-3},
		StepBasis:    "TensorRT-LLM's (NIM runs TensorRT-LLM engines)",
		RequestBasis: "NVIDIA NIM 1.8.0, Llama-3.3-70B-Instruct FP8 TP2 on 2x H100: TTFT 47.8 ms for 500 prompt tokens at concurrency 1 minus the prefill (about 38 ms)"},
	LlamaCpp: {Name: LlamaCpp, Title: "llama.cpp", Overheads: Overheads{Step: 0.5e-3, Request: 1e-3},
		StepBasis:      "estimate: graph build and sampling per token",
		RequestBasis:   "estimate: llama-server's tokenizer and HTTP handling of a short prompt, about 1 ms",
		CUDAComputeEff: ggmlComputeEff, ComputeBasis: ggmlComputeBasis},
	Ollama: {Name: Ollama, Title: "Ollama", Overheads: Overheads{Step: 0.5e-3, Request: 1e-3},
		StepBasis:      "estimate: llama.cpp's graph build and sampling per token",
		RequestBasis:   "estimate: the Ollama server's template and proxying to its runner, about 1 ms",
		CUDAComputeEff: ggmlComputeEff, ComputeBasis: ggmlComputeBasis},
}

// LookupEngine returns an engine's defaults by name (llama.cpp spellings
// accepted).
func LookupEngine(name string) (Engine, bool) {
	key := strings.ToLower(name)
	switch key {
	case "llama.cpp", "llama-cpp", "llama-server":
		key = LlamaCpp
	case "tensorrt-llm", "tensorrt_llm", "trt-llm", "trtllm":
		key = TRTLLM
	}
	e, ok := engines[key]
	return e, ok
}

// Default efficiencies: the fractions of the device's peaks the roofline
// takes as achieved.
const (
	// DefaultComputeEff is the fraction of peak tensor throughput prefill
	// reaches (model FLOPs utilization); 40-60% is typical of
	// FlashAttention prefill on datacenter GPUs.
	DefaultComputeEff = 0.55
	// ggmlComputeEff is llama.cpp's (and Ollama's) prefill efficiency on
	// the FP16-accumulate tensor rate: its matmuls run one 512-token
	// micro-batch at a time, and norms, RoPE and activation quantization
	// between them are not fused.
	ggmlComputeEff   = 0.44
	ggmlComputeBasis = "llama.cpp#4766 (January 2024): CodeLlama-7B F16 pp512 11,048 tok/s on an RTX 4090 = 143 TFLOP/s of its 330 TFLOP/s FP16-accumulate peak"
	// DefaultBandwidthEff is the fraction of peak memory bandwidth decode
	// reaches; well-tuned decode kernels reach 70-85%.
	DefaultBandwidthEff = 0.8
	// DefaultInterconnectEff is the fraction of link bandwidth an
	// all-reduce reaches.
	DefaultInterconnectEff = 0.7
	// DefaultAllReduceLatency is the fixed cost of one small all-reduce
	// over NVLink. Fitted to NVIDIA NIM's batch-1 ITL for Llama-3.3-70B FP8
	// at TP 2 on H100s (18.58 ms): what is left after streaming the
	// weights and the step overhead is 3.3 ms for 160 all-reduces, about
	// 20 µs each, NCCL's small-message latency on NVLink.
	DefaultAllReduceLatency = 20e-6
)
