package plan

import (
	"encoding/json"
	"fmt"
	"math"
)

// maxLayers bounds num_hidden_layers so that a hostile config cannot make
// the planner allocate without limit.
const maxLayers = 4096

func parseBase(c *hfConfig, s *Shape) {
	s.Layers = c.need("num_hidden_layers", "n_layer")
	s.Hidden = c.need("hidden_size")
	s.Heads = c.need("num_attention_heads", "n_head")
	s.KVHeads = c.int("num_key_value_heads", s.Heads)
	s.Vocab = c.need("vocab_size")
	s.Tied = c.boolean("tie_word_embeddings", false)
	s.MaxContext = c.int("max_position_embeddings", 0)
	if c.err != nil {
		return
	}
	if s.Layers > maxLayers {
		c.fail(fmt.Errorf("field num_hidden_layers (%d) is implausibly large (max %d)", s.Layers, maxLayers))
		return
	}
	setHeadDim(c, s, c.int("head_dim", 0))
	s.Kinds = make([]LayerKind, s.Layers)
	if s.MaxContext == 0 {
		s.Warnings = append(s.Warnings, "config.json has no max_position_embeddings: the context length is not checked against the model")
	}
}

func setHeadDim(c *hfConfig, s *Shape, d int) {
	if d == 0 {
		if s.Hidden%s.Heads != 0 {
			c.fail(fmt.Errorf("hidden_size (%d) is not divisible by num_attention_heads (%d) and head_dim is not given", s.Hidden, s.Heads))
			return
		}
		d = s.Hidden / s.Heads
	}
	s.HeadDimK, s.HeadDimV = d, d
}

// applyLayerTypes reads the per-layer "layer_types" list newer configs
// carry; it reports whether the list was present.
func applyLayerTypes(c *hfConfig, s *Shape) bool {
	types := c.strings("layer_types")
	if types == nil || c.err != nil {
		return false
	}
	if len(types) != s.Layers {
		c.fail(fmt.Errorf("field layer_types has %d entries for num_hidden_layers=%d", len(types), s.Layers))
		return true
	}
	for i, t := range types {
		switch t {
		case "full_attention", "attention":
			s.Kinds[i] = LayerFull
		case "sliding_attention":
			s.Kinds[i] = LayerSliding
		case "linear_attention", "mamba":
			s.Kinds[i] = LayerState
		default:
			c.fail(fmt.Errorf("field layer_types[%d] = %q is not full_attention, sliding_attention, linear_attention or mamba", i, t))
			return true
		}
	}
	if s.count(LayerSliding) > 0 {
		s.Window = c.int("sliding_window", 0)
	}
	return true
}

// applyWindow marks layers from..Layers-1 as sliding when the config has a
// window shorter than the model's context.
func applyWindow(c *hfConfig, s *Shape, enabled bool, from int) {
	w := c.int("sliding_window", 0)
	if !enabled || w <= 0 || (s.MaxContext > 0 && w >= s.MaxContext) {
		return
	}
	s.Window = w
	for i := from; i < s.Layers; i++ {
		s.Kinds[i] = LayerSliding
	}
}

func parseDense(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.Intermediate = c.need("intermediate_size")
	if c.err != nil {
		return
	}
	if !applyLayerTypes(c, s) {
		applyWindow(c, s, true, 0)
	}
	countParams(s, layout{norms: 2, gated: true, qkvBias: c.boolean("attention_bias", false)})
}

func parseQwen(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.Intermediate = c.need("intermediate_size")
	if c.err != nil {
		return
	}
	if !applyLayerTypes(c, s) {
		applyWindow(c, s, c.boolean("use_sliding_window", false), c.int("max_window_layers", 0))
	}
	l := layout{norms: 2, gated: true}
	if s.Arch == "qwen2" {
		l.qkvBias = true // Qwen2 always biases q, k and v
	} else {
		l.qkNorm = true
	}
	countParams(s, l)
}

func parseQwenMoE(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.Intermediate = c.int("intermediate_size", 0)
	s.Experts = c.need("num_experts")
	s.ExpertsPerToken = c.need("num_experts_per_tok")
	s.ExpertIntermediate = c.need("moe_intermediate_size")
	step := max(1, c.int("decoder_sparse_step", 1))
	if c.err != nil {
		return
	}
	applyLayerTypes(c, s)
	l := layout{norms: 2, gated: true, qkNorm: true, moe: make([]bool, s.Layers)}
	for i := range l.moe {
		l.moe[i] = (i+1)%step == 0
	}
	countParams(s, l)
}

func parseMixtral(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.Intermediate = c.need("intermediate_size")
	s.Experts = c.need("num_local_experts")
	s.ExpertsPerToken = c.need("num_experts_per_tok")
	if c.err != nil {
		return
	}
	s.ExpertIntermediate = s.Intermediate
	applyWindow(c, s, true, 0)
	l := layout{norms: 2, gated: true, moe: make([]bool, s.Layers)}
	for i := range l.moe {
		l.moe[i] = true
	}
	countParams(s, l)
}

func parseGemma(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.Intermediate = c.need("intermediate_size")
	s.Tied = c.boolean("tie_word_embeddings", true)
	if c.err != nil {
		return
	}
	l := layout{norms: 4, gated: true}
	switch s.Arch {
	case "gemma":
		l.norms = 2
	case "gemma2":
		gemmaPattern(c, s, 2) // even layers slide, odd layers are global
	default:
		l.qkNorm = true
		gemmaPattern(c, s, c.int("sliding_window_pattern", 6))
	}
	countParams(s, l)
}

// gemmaPattern marks every layer sliding except each period-th one, as
// Gemma 2 (period 2) and Gemma 3 (period 6) interleave local and global
// attention; an explicit layer_types list wins.
func gemmaPattern(c *hfConfig, s *Shape, period int) {
	if applyLayerTypes(c, s) {
		return
	}
	s.Window = c.int("sliding_window", 0)
	if period <= 0 || s.Window <= 0 {
		c.fail(fmt.Errorf("field sliding_window must be positive for %s", s.Arch))
		return
	}
	for i := range s.Kinds {
		if (i+1)%period != 0 {
			s.Kinds[i] = LayerSliding
		}
	}
}

func parseFalcon(c *hfConfig, s *Shape) {
	s.Layers = c.need("num_hidden_layers", "n_layer")
	s.Hidden = c.need("hidden_size")
	s.Heads = c.need("num_attention_heads", "n_head")
	s.Vocab = c.need("vocab_size")
	s.Tied = c.boolean("tie_word_embeddings", true)
	newArch := c.boolean("new_decoder_architecture", false)
	switch {
	case newArch:
		s.KVHeads = c.int("num_kv_heads", s.Heads)
	case c.boolean("multi_query", true):
		s.KVHeads = 1
	default:
		s.KVHeads = s.Heads
	}
	if !c.has("max_position_embeddings") {
		s.Warnings = append(s.Warnings, "config.json has no max_position_embeddings: using FalconConfig's default 2048")
	}
	s.MaxContext = c.int("max_position_embeddings", 2048)
	s.Intermediate = c.int("ffn_hidden_size", 4*s.Hidden)
	if c.err != nil || s.Layers > maxLayers {
		c.fail(fmt.Errorf("field num_hidden_layers (%d) is implausibly large (max %d)", s.Layers, maxLayers))
		return
	}
	setHeadDim(c, s, 0)
	s.Kinds = make([]LayerKind, s.Layers)
	norms := 2
	if !newArch && c.boolean("parallel_attn", true) {
		norms = 1 // one input LayerNorm feeds attention and MLP in parallel
	}
	countParams(s, layout{norms: norms, normBias: true, qkvBias: c.boolean("bias", false)})
}

func parseDeepSeek(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.MLA = true
	s.KVLoRARank = c.need("kv_lora_rank")
	s.QLoRARank = c.int("q_lora_rank", 0)
	s.RopeDim = c.need("qk_rope_head_dim")
	nope, vHead := c.need("qk_nope_head_dim"), c.need("v_head_dim")
	s.Intermediate = c.need("intermediate_size")
	if c.err != nil {
		return
	}
	s.HeadDimK, s.HeadDimV = nope+s.RopeDim, vHead
	l := layout{norms: 2, gated: true, nope: nope, vHead: vHead, routerBias: s.Arch == "deepseek_v3", moe: make([]bool, s.Layers)}
	if s.Experts = c.int("n_routed_experts", 0); s.Experts > 0 {
		s.ExpertsPerToken = c.need("num_experts_per_tok")
		s.SharedExperts = c.int("n_shared_experts", 0)
		s.ExpertIntermediate = c.need("moe_intermediate_size")
		first, freq := c.int("first_k_dense_replace", 0), max(1, c.int("moe_layer_freq", 1))
		for i := range l.moe {
			l.moe[i] = i >= first && i%freq == 0
		}
	}
	if n := c.int("num_nextn_predict_layers", 0); n > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d multi-token-prediction layer(s) not counted: engines load them only for speculative decoding", n))
	}
	countParams(s, l)
}

func parseJamba(c *hfConfig, s *Shape) {
	parseBase(c, s)
	s.Intermediate = c.need("intermediate_size")
	period, offset := c.need("attn_layer_period"), c.int("attn_layer_offset", 0)
	ePeriod, eOffset := max(1, c.int("expert_layer_period", 1)), c.int("expert_layer_offset", 0)
	s.Experts, s.ExpertsPerToken = c.int("num_experts", 0), c.int("num_experts_per_tok", 0)
	m := &mambaDims{state: c.need("mamba_d_state"), conv: c.need("mamba_d_conv"), convBias: c.boolean("mamba_conv_bias", true),
		projBias: c.boolean("mamba_proj_bias", false), jambaNorms: true}
	m.inner = c.need("mamba_expand") * s.Hidden
	m.dtRank = dtRank(c, s.Hidden)
	if c.err != nil {
		return
	}
	l := layout{norms: 2, gated: true, mamba: m, moe: make([]bool, s.Layers)}
	for i := range s.Kinds {
		if i%period != offset {
			s.Kinds[i] = LayerState
		}
		l.moe[i] = s.Experts > 1 && i%ePeriod == eOffset
	}
	s.ExpertIntermediate = s.Intermediate
	s.StateElems = int64(m.inner)*int64(m.state) + int64(m.inner)*int64(m.conv-1)
	countParams(s, l)
}

// dtRank reads mamba_dt_rank, which may be "auto": ceil(hidden/16).
func dtRank(c *hfConfig, hidden int) int {
	var s string
	if raw, ok := c.raw["mamba_dt_rank"]; ok && json.Unmarshal(raw, &s) == nil {
		if s != "auto" {
			c.fail(fmt.Errorf("field mamba_dt_rank: want an integer or \"auto\", got %q", s))
		}
		return int(math.Ceil(float64(hidden) / 16))
	}
	return c.int("mamba_dt_rank", int(math.Ceil(float64(hidden)/16)))
}

// checkpointFormat names the checkpoint's weight format from
// quantization_config or torch_dtype.
func checkpointFormat(c *hfConfig, s *Shape) string {
	if raw, ok := c.raw["quantization_config"]; ok && string(raw) != "null" {
		var q struct {
			Method string `json:"quant_method"`
			Bits   int    `json:"bits"`
		}
		if err := json.Unmarshal(raw, &q); err != nil {
			c.fail(fmt.Errorf("field quantization_config: %v", err))
			return ""
		}
		switch {
		case q.Method == "fp8":
			return "fp8"
		case (q.Method == "awq" || q.Method == "gptq") && (q.Bits == 4 || q.Bits == 0):
			return q.Method
		case q.Method == "gptq" && q.Bits == 8:
			return "int8"
		}
		s.Warnings = append(s.Warnings, fmt.Sprintf("quantization_config method %q (bits %d) is not modelled: assuming BF16 weights; pass --weights", q.Method, q.Bits))
		return "bf16"
	}
	dtype := c.str("torch_dtype")
	if dtype == "" {
		dtype = c.str("dtype")
	}
	switch dtype {
	case "bfloat16":
		return "bf16"
	case "float16":
		return "fp16"
	case "float32":
		s.Warnings = append(s.Warnings, "checkpoint is float32: engines serve it in 16-bit by default, planned as BF16")
		return "bf16"
	}
	s.Warnings = append(s.Warnings, fmt.Sprintf("torch_dtype %q not recognised: assuming BF16 weights", dtype))
	return "bf16"
}
