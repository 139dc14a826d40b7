package plan

import (
	"errors"
	"strings"
	"testing"
)

const llamaTiny = `{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
	"num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512, "torch_dtype": "bfloat16"}`

// edit replaces one field of llamaTiny (or adds it).
func edit(field, value string) string {
	if i := strings.Index(llamaTiny, `"`+field+`"`); i >= 0 {
		end := i + strings.IndexAny(llamaTiny[i:], ",}")
		return llamaTiny[:i] + `"` + field + `": ` + value + llamaTiny[end:]
	}
	return strings.Replace(llamaTiny, "{", `{"`+field+`": `+value+`, `, 1)
}

func drop(field string) string {
	i := strings.Index(llamaTiny, `"`+field+`"`)
	end := i + strings.Index(llamaTiny[i:], ",") + 1
	return llamaTiny[:i] + llamaTiny[end:]
}

// TestBadConfig checks that bad configs fail naming the field.
func TestBadConfig(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"unknown architecture lists the known", edit("model_type", `"mamba2"`), "unsupported architecture model_type=\"mamba2\"; supported: deepseek_v2, deepseek_v3"},
		{"heads do not divide hidden", edit("num_attention_heads", "6"), "hidden_size (64) is not divisible by num_attention_heads (6)"},
		{"kv heads do not divide heads", edit("num_key_value_heads", "3"), "num_key_value_heads (3) does not divide num_attention_heads (4)"},
		{"more kv heads than heads", edit("num_key_value_heads", "8"), "num_key_value_heads (8) exceeds num_attention_heads (4)"},
		{"missing layers", drop("num_hidden_layers"), "missing field num_hidden_layers"},
		{"missing vocab", drop("vocab_size"), "missing field vocab_size"},
		{"missing intermediate", drop("intermediate_size"), "missing field intermediate_size"},
		{"wrong type", edit("hidden_size", `"big"`), "field hidden_size: want a number"},
		{"negative", edit("num_hidden_layers", "-2"), "field num_hidden_layers: want a non-negative integer"},
		{"fractional", edit("num_attention_heads", "4.5"), "field num_attention_heads: want a non-negative integer"},
		{"zero", edit("hidden_size", "0"), "field hidden_size must be positive"},
		{"too deep", edit("num_hidden_layers", "100000"), "implausibly large"},
		{"not an object", `[1, 2]`, "not a JSON object"},
		{"layer_types length", edit("layer_types", `["full_attention"]`), "layer_types has 1 entries for num_hidden_layers=2"},
		{"layer_types value", edit("layer_types", `["full_attention", "cross"]`), `layer_types[1] = "cross"`},
		{"gemma2 without window", strings.Replace(llamaTiny, `"llama"`, `"gemma2"`, 1), "sliding_window must be positive"},
		{"bad quantization", edit("quantization_config", `[1]`), "field quantization_config"},
		{"bad dt rank", `{"model_type": "jamba", "num_hidden_layers": 8, "hidden_size": 64, "num_attention_heads": 4,
			"intermediate_size": 128, "vocab_size": 100, "attn_layer_period": 8, "mamba_d_state": 16, "mamba_d_conv": 4,
			"mamba_expand": 2, "mamba_dt_rank": "wide"}`, `mamba_dt_rank: want an integer or "auto"`},
	}
	for _, tt := range tests {
		_, err := ParseHFConfig([]byte(tt.config), false)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestApproximate reads an unknown architecture as a dense decoder, with a
// warning, when asked to.
func TestApproximate(t *testing.T) {
	s, err := ParseHFConfig([]byte(edit("model_type", `"newarch"`)), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0], `"newarch" is not known`) {
		t.Errorf("warnings %q", s.Warnings)
	}
	if got := newKVModel(s, KVTypes["fp16"], engineSpecs[EngineVLLM], 1).PerToken(); got != 2*2*2*16*2 {
		t.Errorf("KV %d B/token", got)
	}
}

// TestBadPlanInputs checks workload and option errors.
func TestBadPlanInputs(t *testing.T) {
	s, err := ParseHFConfig([]byte(llamaTiny), false)
	if err != nil {
		t.Fatal(err)
	}
	ok := Workload{PromptTokens: 100, OutputTokens: 10, Concurrency: 1}
	tests := []struct {
		name string
		w    Workload
		o    func(*Options)
		want string
	}{
		{"context beyond the model", Workload{PromptTokens: 500, OutputTokens: 100, Concurrency: 1}, nil, "context exceeds the model's maximum: context 600 > 512"},
		{"explicit context beyond", Workload{PromptTokens: 10, OutputTokens: 10, Concurrency: 1, Context: 1000}, nil, "context 1000 > 512"},
		{"context shorter than request", Workload{PromptTokens: 100, OutputTokens: 10, Concurrency: 1, Context: 50}, nil, "context 50 is shorter than prompt + output (110)"},
		{"no users", Workload{PromptTokens: 100, OutputTokens: 10}, nil, "concurrency (0) must be at least 1"},
		{"unknown engine", ok, func(o *Options) { o.Engine = "tgi" }, `unknown engine "tgi" (known: vllm, sglang, trtllm, nim, llamacpp, ollama)`},
		{"unknown format", ok, func(o *Options) { o.Weights = "int3" }, `unknown weight format "int3"`},
		{"q8_0 KV on vLLM", ok, func(o *Options) { o.KVType = "q8_0" }, "KV-cache type q8_0 is not offered by vLLM"},
		{"fp8 KV on Ollama", ok, func(o *Options) { o.Engine, o.KVType = EngineOllama, "fp8" }, "KV-cache type fp8 is not offered by Ollama"},
		{"headroom", ok, func(o *Options) { o.Headroom = 0.95 }, "headroom 95% is outside 0..90%"},
		{"efficiency", ok, func(o *Options) { o.Eff.Compute = 1.5 }, "efficiency factors must be in (0, 1]"},
		{"tp not dividing heads", ok, func(o *Options) { o.GPUs = 3 }, "tensor parallel 3 does not divide the 4 attention heads"},
	}
	for _, tt := range tests {
		o := defaultOptions(EngineVLLM)
		if tt.o != nil {
			tt.o(&o)
		}
		_, err := Plan(s, tt.w, o, Catalog())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	_, err = Plan(s, Workload{PromptTokens: 500, OutputTokens: 100, Concurrency: 1}, defaultOptions(EngineVLLM), nil)
	if !errors.Is(err, ErrContext) {
		t.Errorf("context error %v does not wrap ErrContext", err)
	}
}
