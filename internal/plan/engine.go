package plan

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/internal/perfmodel"
)

// Engines.
const (
	EngineVLLM     = perfmodel.VLLM
	EngineSGLang   = perfmodel.SGLang
	EngineTRTLLM   = perfmodel.TRTLLM
	EngineNIM      = perfmodel.NIM
	EngineLlamaCpp = perfmodel.LlamaCpp
	EngineOllama   = perfmodel.Ollama
)

// Engine memory and scheduling constants, each with the basis it rests on.
const (
	// vLLM's memory rule lives in internal/perfmodel, shared with the
	// simulator.
	vllmBlockTokens   = perfmodel.VLLMBlockTokens
	vllmProfileTokens = perfmodel.VLLMProfileTokens
	// llama.cpp pads the context (KV cells) to a multiple of 256
	// (llama-context.cpp: GGML_PAD(n_ctx, 256)).
	llamaCellPad = 256
	// llama.cpp's physical batch (n_ubatch) and Ollama's num_batch: the
	// tokens one forward pass of a prompt processes.
	llamaUBatch = 512
	// Ollama keeps this much free on CUDA/ROCm devices (its minimum GPU
	// memory reserve) and 512 MiB on Metal.
	ollamaGPUReserveMiB   = 457
	ollamaMetalReserveMiB = 512
)

// Engines lists the engine names the planner models.
func Engines() []string {
	return []string{EngineVLLM, EngineSGLang, EngineTRTLLM, EngineNIM, EngineLlamaCpp, EngineOllama}
}

// engineSpec is one engine's memory and scheduling behaviour.
type engineSpec struct {
	name         string
	title        string
	defaultKV    string
	paged        bool // vLLM: KV in blocks from a shared pool
	prefillChunk int  // prompt tokens per forward pass
	// overheads are the engine's step and per-request host times
	// (internal/perfmodel, with their sources).
	overheads perfmodel.Overheads
	// cudaComputeEff is the engine's prefill efficiency on the
	// FP16-accumulate rate (0 = the default).
	cudaComputeEff float64
	// tensorParallel: GPUs split every layer (all-reduce per layer);
	// otherwise layers are split across GPUs and run one after another.
	tensorParallel bool
	// kvOfFree: the KV cache gets (1 - headroom) of the memory left after
	// weights, activations and runtime (TensorRT-LLM's
	// free_gpu_memory_fraction, default 0.9), not of all memory (vLLM).
	kvOfFree bool
	// fp16Accumulate: on a GPU, 16-bit and quantized matmuls run at the
	// FP16-accumulate tensor rate (ggml's cuBLAS and MMQ paths).
	fp16Accumulate bool
	// passPerSeqCPU: on a host CPU, a decode step at batch B costs B
	// single-sequence steps (each sequence its own pass over the weights).
	passPerSeqCPU bool
}

var engineSpecs = map[string]engineSpec{
	EngineVLLM: {name: EngineVLLM, title: "vLLM", defaultKV: "auto", paged: true,
		prefillChunk: vllmProfileTokens, overheads: overheads(EngineVLLM), cudaComputeEff: cudaComputeEff(EngineVLLM), tensorParallel: true},
	// SGLang and TensorRT-LLM are timed with their own overheads; their
	// memory is planned with vLLM's rule (their own rules are not modelled).
	EngineSGLang: {name: EngineSGLang, title: "SGLang", defaultKV: "auto", paged: true,
		prefillChunk: vllmProfileTokens, overheads: overheads(EngineSGLang), cudaComputeEff: cudaComputeEff(EngineSGLang), tensorParallel: true},
	EngineTRTLLM: {name: EngineTRTLLM, title: "TensorRT-LLM", defaultKV: "auto", paged: true,
		prefillChunk: vllmProfileTokens, overheads: overheads(EngineTRTLLM), cudaComputeEff: cudaComputeEff(EngineTRTLLM), tensorParallel: true, kvOfFree: true},
	// NIM's LLM containers run TensorRT-LLM engines behind NVIDIA's own
	// API server: TensorRT-LLM's memory and step, NIM's request overhead.
	EngineNIM: {name: EngineNIM, title: "NVIDIA NIM (TensorRT-LLM)", defaultKV: "auto", paged: true,
		prefillChunk: vllmProfileTokens, overheads: overheads(EngineNIM), cudaComputeEff: cudaComputeEff(EngineNIM), tensorParallel: true, kvOfFree: true},
	EngineLlamaCpp: {name: EngineLlamaCpp, title: "llama.cpp", defaultKV: "f16",
		prefillChunk: llamaUBatch, overheads: overheads(EngineLlamaCpp), cudaComputeEff: cudaComputeEff(EngineLlamaCpp), fp16Accumulate: true},
	// Ollama gives each slot its own KV stream (kv_unified = false) and
	// llama.cpp then splits a batch into micro-batches of consecutive
	// sequence ids, so a decode step can run as several passes; per-sequence
	// host work adds to it. Measured on CPU, the step at B users was never
	// less than B single-user steps (docs/PERFORMANCE.md, Planner against a
	// real engine), so the planner takes B x step(1). Not measured on a GPU,
	// where the planner keeps one pass per step.
	EngineOllama: {name: EngineOllama, title: "Ollama", defaultKV: "f16",
		prefillChunk: llamaUBatch, overheads: overheads(EngineOllama), cudaComputeEff: cudaComputeEff(EngineOllama), passPerSeqCPU: true, fp16Accumulate: true},
}

func overheads(name string) perfmodel.Overheads {
	e, _ := perfmodel.LookupEngine(name)
	return e.Overheads
}

func cudaComputeEff(name string) float64 {
	e, _ := perfmodel.LookupEngine(name)
	return e.CUDAComputeEff
}

func lookupEngine(name string) (engineSpec, error) {
	key := strings.ToLower(name)
	if pe, ok := perfmodel.LookupEngine(key); ok {
		key = pe.Name
	}
	e, ok := engineSpecs[key]
	if !ok {
		return e, fmt.Errorf("unknown engine %q (known: %s)", name, strings.Join(Engines(), ", "))
	}
	return e, nil
}

// runtime is the engine's fixed memory per device and its basis.
func (e engineSpec) runtime(d *Device, gpus int) (int64, string) {
	if e.paged {
		n := perfmodel.VLLMNonTorch(gpus)
		return n, fmt.Sprintf("vLLM non-torch memory (CUDA context, cuBLAS, NCCL): %.2g GiB, as logged for Llama-3-8B at TP %s (vllm#10511)", float64(n)/gib, map[bool]string{true: "2", false: "1"}[gpus > 1])
	}
	switch d.Kind {
	case KindApple:
		return ollamaMetalReserveMiB * mib, "Metal: Ollama's 512 MiB minimum reserve"
	case KindCPU:
		return 0, "host memory: none beyond the OS (keep it in headroom)"
	}
	return ollamaGPUReserveMiB * mib, "CUDA/ROCm context: Ollama's 457 MiB minimum GPU reserve"
}

// activation is the engine's activation or compute-buffer peak per device.
// cellsPerSeq is the KV cells one llama.cpp slot attends over. vLLM's
// peak is the same at every TP degree (its logs at TP 1, 2 and 4).
func (e engineSpec) activation(s *Shape, cellsPerSeq int64) (int64, string) {
	h, v := int64(s.Hidden), int64(s.Vocab)
	if e.paged {
		inter := int64(max(s.Intermediate, s.ExpertsPerToken*s.ExpertIntermediate+s.SharedExperts*s.ExpertIntermediate))
		return perfmodel.VLLMActivation(h, inter, v), fmt.Sprintf("profile run: %d tokens x (3 x %d + 8 x %d) x 2 B + %d seqs x %d vocab x 4 B",
			perfmodel.VLLMProfileTokens, inter, h, perfmodel.VLLMProfileSeqs, v)
	}
	// With flash attention (llama.cpp's default) the compute buffer holds
	// the larger of the FFN phase and the logits phase in f32, plus the f16
	// KQ mask over one slot's cells.
	ub, inter := int64(llamaUBatch), int64(max(s.Intermediate, s.ExpertsPerToken*s.ExpertIntermediate))
	n := max(ub*4*(3*inter+4*h), ub*4*(v+h)) + ub*cellsPerSeq*2
	return n, fmt.Sprintf("compute buffer: max(%d x 4 B x (3 x %d + 4 x %d), %d x 4 B x (%d + %d)) + %d x %s cells x 2 B mask",
		ub, inter, h, ub, v, h, ub, FormatInt(cellsPerSeq))
}
