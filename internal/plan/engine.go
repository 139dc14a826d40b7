package plan

import (
	"fmt"
	"strings"
)

// Engines.
const (
	EngineVLLM     = "vllm"
	EngineLlamaCpp = "llamacpp"
	EngineOllama   = "ollama"
)

// Engine memory and scheduling constants, each with the basis it rests on.
const (
	// vLLM allocates KV in blocks of 16 tokens (--block-size default).
	vllmBlockTokens = 16
	// vLLM's profile run uses max_num_batched_tokens tokens; 8192 is the
	// default on large GPUs (docs ENGINES.md).
	vllmProfileTokens = 8192
	// Sequences whose fp32 logits the profile run's sampler holds; with the
	// token count above this reproduces the 1.26 GiB activation peak vLLM
	// logs for Llama-3-8B on an H100 (vllm-project/vllm#10511).
	vllmProfileSeqs = 256
	// vLLM's non-torch memory (CUDA context, cuBLAS workspace, NCCL): 1.79
	// GiB at TP 1 and 3.58 GiB at TP 2 in the same log.
	vllmNonTorchGiB = 1.8
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
	// vLLM's per-step CPU work (scheduling, sampling, detokenizing) when
	// decode runs from CUDA graphs: an estimate in the low milliseconds.
	vllmStepOverhead = 2e-3
	// llama.cpp's per-token host overhead (graph build, sampling): an
	// estimate.
	llamaStepOverhead = 0.5e-3
)

// Engines lists the engine names the planner models.
func Engines() []string { return []string{EngineVLLM, EngineLlamaCpp, EngineOllama} }

// engineSpec is one engine's memory and scheduling behaviour.
type engineSpec struct {
	name         string
	title        string
	defaultKV    string
	paged        bool // vLLM: KV in blocks from a shared pool
	prefillChunk int  // prompt tokens per forward pass
	stepOverhead float64
	// tensorParallel: GPUs split every layer (all-reduce per layer);
	// otherwise layers are split across GPUs and run one after another.
	tensorParallel bool
	// passPerSeqCPU: on a host CPU, a decode step at batch B costs B
	// single-sequence steps (each sequence its own pass over the weights).
	passPerSeqCPU bool
}

var engineSpecs = map[string]engineSpec{
	EngineVLLM: {name: EngineVLLM, title: "vLLM", defaultKV: "auto", paged: true,
		prefillChunk: vllmProfileTokens, stepOverhead: vllmStepOverhead, tensorParallel: true},
	EngineLlamaCpp: {name: EngineLlamaCpp, title: "llama.cpp", defaultKV: "f16",
		prefillChunk: llamaUBatch, stepOverhead: llamaStepOverhead},
	// Ollama gives each slot its own KV stream (kv_unified = false) and
	// llama.cpp then splits a batch into micro-batches of consecutive
	// sequence ids, so a decode step can run as several passes; per-sequence
	// host work adds to it. Measured on CPU (Ollama 0.17.4, one thread, the
	// test model, docs/PERFORMANCE.md): the step at 2-4 users was 1.1-1.3x
	// B single-user steps, so the planner takes B x step(1). Not measured on
	// a GPU, where the planner keeps one pass per step.
	EngineOllama: {name: EngineOllama, title: "Ollama", defaultKV: "f16",
		prefillChunk: llamaUBatch, stepOverhead: llamaStepOverhead, passPerSeqCPU: true},
}

func lookupEngine(name string) (engineSpec, error) {
	key := strings.ToLower(name)
	if key == "llama.cpp" || key == "llama-cpp" || key == "llama-server" {
		key = EngineLlamaCpp
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
		n := vllmNonTorchGiB
		if gpus > 1 {
			n *= 2
		}
		return int64(n * gib), fmt.Sprintf("vLLM non-torch memory (CUDA context, cuBLAS, NCCL): %.2g GiB, as logged for Llama-3-8B at TP %s (vllm#10511)", n, map[bool]string{true: "2", false: "1"}[gpus > 1])
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
// cellsPerSeq is the KV cells one llama.cpp slot attends over.
func (e engineSpec) activation(s *Shape, cellsPerSeq int64, gpus int) (int64, string) {
	h, v := int64(s.Hidden), int64(s.Vocab)
	if e.paged {
		inter := int64(max(s.Intermediate, s.ExpertsPerToken*s.ExpertIntermediate+s.SharedExperts*s.ExpertIntermediate))
		n := vllmProfileTokens*(3*inter/int64(gpus)+8*h)*2 + vllmProfileSeqs*v*4
		return n, fmt.Sprintf("profile run: %d tokens x (3 x %d/%d + 8 x %d) x 2 B + %d seqs x %d vocab x 4 B",
			vllmProfileTokens, inter, gpus, h, vllmProfileSeqs, v)
	}
	// With flash attention (llama.cpp's default) the compute buffer holds
	// the larger of the FFN phase and the logits phase in f32, plus the f16
	// KQ mask over one slot's cells.
	ub, inter := int64(llamaUBatch), int64(max(s.Intermediate, s.ExpertsPerToken*s.ExpertIntermediate))
	n := max(ub*4*(3*inter+4*h), ub*4*(v+h)) + ub*cellsPerSeq*2
	return n, fmt.Sprintf("compute buffer: max(%d x 4 B x (3 x %d + 4 x %d), %d x 4 B x (%d + %d)) + %d x %s cells x 2 B mask",
		ub, inter, h, ub, v, h, ub, fmtInt(cellsPerSeq))
}
