package plan

import (
	"strings"
	"testing"
)

// TestKVBytesPerToken checks the KV cache one token adds, in 16-bit, against
// the arithmetic on each model's published config.
func TestKVBytesPerToken(t *testing.T) {
	tests := []struct {
		model string
		want  int64
	}{
		// 2 (K,V) x 32 layers x 8 KV heads x 128 x 2 B
		{"Llama-3.1-8B", 131072},
		// 2 x 80 x 8 x 128 x 2
		{"Llama-3.1-70B", 327680},
		// 2 x 32 x 8 x 128 x 2; the 4096-token window caps a sequence, not a token
		{"Mistral-7B-v0.1", 131072},
		// 2 x 28 x 4 x 128 x 2
		{"Qwen2.5-7B", 57344},
		// 2 x 42 x 8 x 256 (explicit head_dim) x 2
		{"gemma-2-9b", 344064},
		// MLA: 61 x (512 latent + 64 rope) x 2, no x2 for K and V
		{"DeepSeek-V3", 70272},
		// experts do not change attention: 2 x 32 x 8 x 128 x 2
		{"Mixtral-8x7B-v0.1", 131072},
		// hybrid: only 4 of 32 layers attend: 2 x 4 x 8 x 128 x 2
		{"Jamba-v0.1", 16384},
		// MQA: 2 x 32 x 1 x 64 x 2
		{"falcon-7b", 8192},
		// MHA: 2 x 32 x 32 x 96 x 2
		{"Phi-3-mini-4k-instruct", 393216},
	}
	for _, tt := range tests {
		s := loadModel(t, tt.model)
		for _, kv := range []string{"bf16", "fp16"} {
			got := newKVModel(s, KVTypes[kv], engineSpecs[EngineVLLM], 1).PerToken()
			if got != tt.want {
				t.Errorf("%s %s: %d B/token, want %d", tt.model, kv, got, tt.want)
			}
		}
		// fp8 halves it exactly.
		if got := newKVModel(s, KVTypes["fp8"], engineSpecs[EngineVLLM], 1).PerToken(); got != tt.want/2 {
			t.Errorf("%s fp8: %d B/token, want %d", tt.model, got, tt.want/2)
		}
	}
}

// TestSequenceKV checks per-sequence caches where windows and state layers
// change the total.
func TestSequenceKV(t *testing.T) {
	tests := []struct {
		name  string
		model string
		ctx   int64
		want  int64
	}{
		// Mistral's sliding window caps every layer at 4096 tokens.
		{"mistral short", "Mistral-7B-v0.1", 1000, 1000 * 131072},
		{"mistral long", "Mistral-7B-v0.1", 32768, 4096 * 131072},
		// Gemma 2: 21 global layers hold 8192, 21 local layers 4096;
		// a layer-token is 2 x 8 x 256 x 2 = 8192 B.
		{"gemma interleaved", "gemma-2-9b", 8192, (21*8192 + 21*4096) * 8192},
		// Jamba: 4 attention layers x 4096 B per token, plus 28 Mamba layers
		// of (8192 x 16 SSM + 8192 x 3 conv) bf16 state.
		{"jamba hybrid", "Jamba-v0.1", 100000, 4*4096*100000 + 28*(8192*16+8192*3)*2},
		// Qwen2.5's sliding_window is off (use_sliding_window false).
		{"qwen no window", "Qwen2.5-7B", 131072, 131072 * 57344},
	}
	for _, tt := range tests {
		s := loadModel(t, tt.model)
		if got := newKVModel(s, KVTypes["bf16"], engineSpecs[EngineVLLM], 1).seqBytes(tt.ctx); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
}

// TestParams checks parameter counts against published totals.
func TestParams(t *testing.T) {
	tests := []struct {
		model          string
		params, active int64
		tol            float64
		source         string
	}{
		{"Llama-3.1-8B", 8030261248, 8030261248, 0, "safetensors index total_size / 2 bytes"},
		{"Llama-3.1-70B", 70553706496, 70553706496, 0, "estimated from config.json"},
		{"Mistral-7B-v0.1", 7241732096, 7241732096, 0, ""},
		{"Qwen2.5-7B", 7615616512, 7615616512, 0, ""},
		{"gemma-2-9b", 9241705984, 9241705984, 0, ""},
		{"Mixtral-8x7B-v0.1", 46702792704, 12879925248, 0, ""},
		{"falcon-7b", 6921720704, 6921720704, 0, ""},
		{"Phi-3-mini-4k-instruct", 3821079552, 3821079552, 0, ""},
		// Jamba: 51.6 B total, 12 B active (model card).
		{"Jamba-v0.1", 51570323328, 12110311296, 0, ""},
		// DeepSeek-V3: 671 B total, 37 B active (model card), MTP layer excluded.
		{"DeepSeek-V3", 671e9, 37e9, 0.02, ""},
	}
	for _, tt := range tests {
		s := loadModel(t, tt.model)
		if !approx(float64(s.Params), float64(tt.params), tt.tol) || !approx(float64(s.ActiveParams), float64(tt.active), tt.tol) {
			t.Errorf("%s: params %d active %d, want %d and %d (±%.0f%%)", tt.model, s.Params, s.ActiveParams, tt.params, tt.active, 100*tt.tol)
		}
		if tt.source != "" && s.ParamsSource != tt.source {
			t.Errorf("%s: source %q, want %q", tt.model, s.ParamsSource, tt.source)
		}
	}
}

// TestLayerKinds checks the per-layer resolution of each family.
func TestLayerKinds(t *testing.T) {
	tests := []struct {
		model                 string
		full, sliding, state  int
		window                int
		family, checkpointFmt string
	}{
		{"Llama-3.1-8B", 32, 0, 0, 0, "GQA", "bf16"},
		{"Mistral-7B-v0.1", 0, 32, 0, 4096, "GQA, 32/32 layers sliding window 4096", "bf16"},
		{"gemma-2-9b", 21, 21, 0, 4096, "GQA, 21/42 layers sliding window 4096", "bf16"},
		{"Phi-3-mini-4k-instruct", 0, 32, 0, 2047, "MHA, 32/32 layers sliding window 2047", "bf16"},
		{"Jamba-v0.1", 4, 0, 28, 0, "GQA, hybrid: 4/32 attention layers, MoE 16 experts, 2 active", "bf16"},
		{"DeepSeek-V3", 61, 0, 0, 0, "MLA, MoE 256 experts, 8 active", "fp8"},
		{"falcon-7b", 32, 0, 0, 0, "MQA", "bf16"},
		{"Qwen2.5-7B", 28, 0, 0, 0, "GQA", "bf16"},
	}
	for _, tt := range tests {
		s := loadModel(t, tt.model)
		got := [3]int{s.count(LayerFull), s.count(LayerSliding), s.count(LayerState)}
		if got != [3]int{tt.full, tt.sliding, tt.state} || s.Window != tt.window {
			t.Errorf("%s: full/sliding/state %v window %d, want %v %d", tt.model, got, s.Window, [3]int{tt.full, tt.sliding, tt.state}, tt.window)
		}
		if s.Family() != tt.family || s.CheckpointFmt != tt.checkpointFmt {
			t.Errorf("%s: family %q format %q, want %q %q", tt.model, s.Family(), s.CheckpointFmt, tt.family, tt.checkpointFmt)
		}
	}
	// Gemma 2 slides on even layers (0, 2, ...) and attends globally on odd.
	s := loadModel(t, "gemma-2-9b")
	if s.Kinds[0] != LayerSliding || s.Kinds[1] != LayerFull {
		t.Errorf("gemma-2 layer 0 %v, layer 1 %v", s.Kinds[0], s.Kinds[1])
	}
	// Jamba attends at layers 4, 12, 20, 28 (offset 4, period 8).
	j := loadModel(t, "Jamba-v0.1")
	for i, k := range j.Kinds {
		if want := i%8 == 4; (k != LayerState) != want {
			t.Errorf("jamba layer %d: %v", i, k)
		}
	}
}

// TestWarnings checks the warnings a model's config earns.
func TestWarnings(t *testing.T) {
	for model, want := range map[string]string{
		"gemma-2-9b":  "checkpoint is float32",
		"falcon-7b":   "FalconConfig's default 2048",
		"DeepSeek-V3": "multi-token-prediction",
	} {
		s := loadModel(t, model)
		if !strings.Contains(strings.Join(s.Warnings, "\n"), want) {
			t.Errorf("%s: warnings %q, want one containing %q", model, s.Warnings, want)
		}
	}
}

// TestGemma3Pattern checks Gemma 3's 5-local-1-global interleaving and the
// text_config wrapper of multimodal checkpoints.
func TestGemma3Pattern(t *testing.T) {
	cfg := `{"model_type": "gemma3", "torch_dtype": "bfloat16", "text_config": {"model_type": "gemma3_text",
		"num_hidden_layers": 12, "hidden_size": 2560, "num_attention_heads": 8, "num_key_value_heads": 4,
		"head_dim": 256, "intermediate_size": 10240, "vocab_size": 262208, "max_position_embeddings": 131072,
		"sliding_window": 1024, "sliding_window_pattern": 6}}`
	s, err := ParseHFConfig([]byte(cfg), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.count(LayerFull) != 2 || s.Kinds[5] != LayerFull || s.Kinds[11] != LayerFull || s.Window != 1024 {
		t.Errorf("kinds %v window %d", s.Kinds, s.Window)
	}
}
