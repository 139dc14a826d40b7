package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Format is a weight storage format and what it costs per weight.
type Format struct {
	Name string
	// Bits is the average storage per weight including scales and zero
	// points. For GGUF mixtures it is the whole-file average measured on
	// Llama-3.1-8B, embeddings included.
	Bits float64
	// Compute names the tensor-core rate prefill runs at: "bf16" or "fp8".
	Compute string
	// KeepsEmbeddings16 is true when the format leaves the embedding table
	// and the output head in 16-bit (vLLM's FP8/INT8/AWQ/GPTQ loaders).
	KeepsEmbeddings16 bool
	Source            string
}

// Formats are the weight formats the planner knows, by lower-case name.
var Formats = map[string]Format{
	"fp32": {Name: "FP32", Bits: 32, Compute: "bf16", Source: "4-byte IEEE float"},
	"bf16": {Name: "BF16", Bits: 16, Compute: "bf16", Source: "2-byte bfloat16"},
	"fp16": {Name: "FP16", Bits: 16, Compute: "bf16", Source: "2-byte IEEE half"},
	"fp8": {Name: "FP8", Bits: 8, Compute: "fp8", KeepsEmbeddings16: true,
		Source: "e4m3 weights with per-tensor/channel or 128x128-block fp32 scales (< 0.01 bit/weight); vLLM fp8 loader"},
	"int8": {Name: "INT8", Bits: 8, Compute: "fp8", KeepsEmbeddings16: true,
		Source: "W8A8/W8A16 with one fp16/fp32 scale per output channel (negligible per weight)"},
	"awq": {Name: "INT4 AWQ (g128)", Bits: 4 + 20.0/128, Compute: "bf16", KeepsEmbeddings16: true,
		Source: "AWQ GEMM layout: packed int4 weights + fp16 scale and int4 zero point per group of 128 = 4 + 20/128 bits"},
	"gptq": {Name: "INT4 GPTQ (g128)", Bits: 4 + 20.0/128, Compute: "bf16", KeepsEmbeddings16: true,
		Source: "GPTQ layout: packed int4 weights + fp16 scale and packed int4 zero per group of 128 (g_idx adds 32 bits per input row, ignored)"},
	"q8_0":   ggufBlock("Q8_0", 34, 32),
	"q4_0":   ggufBlock("Q4_0", 18, 32),
	"q4_1":   ggufBlock("Q4_1", 20, 32),
	"q5_0":   ggufBlock("Q5_0", 22, 32),
	"q5_1":   ggufBlock("Q5_1", 24, 32),
	"q6_k":   ggufBlock("Q6_K", 210, 256),
	"f16":    {Name: "F16", Bits: 16, Compute: "bf16", Source: "GGUF F16"},
	"q5_k_m": ggufMix("Q5_K_M", 5.7036),
	"q5_k_s": ggufMix("Q5_K_S", 5.5704),
	"q4_k_m": ggufMix("Q4_K_M", 4.8944),
	"q4_k_s": ggufMix("Q4_K_S", 4.6672),
	"q3_k_l": ggufMix("Q3_K_L", 4.2979),
	"q3_k_s": ggufMix("Q3_K_S", 3.6429),
	"q2_k":   ggufMix("Q2_K", 3.1593),
	"iq4_xs": ggufMix("IQ4_XS", 4.4597),
	"q3_k_m": {Name: "Q3_K_M", Bits: 3.91, Compute: "bf16",
		Source: "llama.cpp tools/quantize/README.md, Llama-2-7B table (not in the Llama-3.1-8B table)"},
}

func ggufBlock(name string, blockBytes, blockElems int) Format {
	return Format{Name: name, Bits: float64(blockBytes*8) / float64(blockElems), Compute: "bf16",
		Source: fmt.Sprintf("ggml block: %d bytes per %d weights", blockBytes, blockElems)}
}

func ggufMix(name string, bits float64) Format {
	return Format{Name: name, Bits: bits, Compute: "bf16",
		Source: "llama.cpp tools/quantize/README.md, Llama-3.1-8B whole-file bits/weight"}
}

// LookupFormat finds a weight format by name, case-insensitively.
func LookupFormat(name string) (Format, error) {
	f, ok := Formats[strings.ToLower(name)]
	if !ok {
		return Format{}, fmt.Errorf("unknown weight format %q (known: %s)", name, strings.Join(sortedKeys(Formats), ", "))
	}
	return f, nil
}

// KVType is a KV-cache element type: BlockBytes per BlockElems elements.
type KVType struct {
	Name       string
	BlockBytes int64
	BlockElems int64
	Engines    string // which engines offer it
}

// KVTypes are the KV-cache element types, by lower-case name.
var KVTypes = map[string]KVType{
	"fp16": {"fp16", 2, 1, "all"},
	"f16":  {"fp16", 2, 1, "all"},
	"bf16": {"bf16", 2, 1, "vllm, sglang, trtllm, nim"},
	"fp8":  {"fp8", 1, 1, "vllm, sglang, trtllm, nim"},
	"q8_0": {"q8_0", 34, 32, "llamacpp, ollama"},
	"q4_0": {"q4_0", 18, 32, "llamacpp, ollama"},
	"f32":  {"f32", 4, 1, "llamacpp, ollama"},
}

// Bytes is the storage of n elements, whole blocks as ggml stores rows.
func (t KVType) Bytes(n int64) int64 {
	return ceilDiv64(n, t.BlockElems) * t.BlockBytes
}

// PerElem is the average bytes per element.
func (t KVType) PerElem() float64 { return float64(t.BlockBytes) / float64(t.BlockElems) }

// LookupKVType finds a KV-cache type by name.
func LookupKVType(name string) (KVType, error) {
	t, ok := KVTypes[strings.ToLower(name)]
	if !ok {
		return KVType{}, fmt.Errorf("unknown KV-cache type %q (known: %s)", name, strings.Join(sortedKeys(KVTypes), ", "))
	}
	return t, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }
