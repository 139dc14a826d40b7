package plan

import (
	"fmt"
	"strings"
)

// LayerKind says what one decoder layer keeps per sequence.
type LayerKind int

const (
	// LayerFull attends over the whole context: KV grows with every token.
	LayerFull LayerKind = iota
	// LayerSliding attends over the last Window tokens: KV is capped there.
	LayerSliding
	// LayerState is recurrent (Mamba, linear attention): a constant state
	// per sequence, nothing per token.
	LayerState
)

// Shape is what the planner needs to know of a model: its dimensions, how
// each layer caches, and how many parameters it has.
type Shape struct {
	Name   string // directory or file name the shape was read from
	Arch   string // model_type or general.architecture
	Layers int
	Hidden int
	Heads  int
	// KVHeads is the number of key/value heads; Heads for MHA, 1 for MQA.
	KVHeads  int
	HeadDimK int
	HeadDimV int
	// Intermediate is the dense MLP width; ExpertIntermediate the width of
	// one routed expert.
	Intermediate int
	Vocab        int
	Tied         bool
	MaxContext   int
	// Window is the sliding-window length of LayerSliding layers.
	Window int
	Kinds  []LayerKind

	// MLA (DeepSeek V2/V3): the cache holds one latent of KVLoRARank +
	// RopeDim per token per layer instead of separate K and V heads.
	MLA        bool
	KVLoRARank int
	QLoRARank  int
	RopeDim    int

	// MoE: all experts are resident; ExpertsPerToken of Experts are read
	// for each token. MoELayers counts the layers that have experts.
	Experts            int
	ExpertsPerToken    int
	SharedExperts      int
	ExpertIntermediate int
	MoELayers          int

	// StateElems is the recurrent state of one LayerState layer per
	// sequence, in elements.
	StateElems int64

	Params        int64  // all parameters
	ActiveParams  int64  // parameters used for one token
	ExpertParams  int64  // parameters in routed experts (all of them)
	EmbedParams   int64  // the input embedding table
	ParamsSource  string // how Params was obtained
	CheckpointFmt string // weight format of the checkpoint, a Formats key
	// CheckpointBytes is the exact size of the checkpoint's tensors when
	// known (GGUF header, safetensors index); 0 otherwise.
	CheckpointBytes int64
	// CheckpointBits is the checkpoint's average bits per weight when the
	// format is not in Formats (unusual GGUF file types).
	CheckpointBits float64
	Warnings       []string
}

// AttentionLayers counts the layers that hold a per-token KV cache.
func (s *Shape) AttentionLayers() int {
	n := 0
	for _, k := range s.Kinds {
		if k != LayerState {
			n++
		}
	}
	return n
}

// count returns how many layers are of kind k.
func (s *Shape) count(k LayerKind) int {
	n := 0
	for _, x := range s.Kinds {
		if x == k {
			n++
		}
	}
	return n
}

// KVElemsPerLayer is the number of cached elements per token in one
// attention layer on one of tp tensor-parallel ranks. KV heads are split
// across ranks and replicated when there are fewer heads than ranks; an MLA
// latent is replicated on every rank.
func (s *Shape) KVElemsPerLayer(tp int) int64 {
	if s.MLA {
		return int64(s.KVLoRARank + s.RopeDim)
	}
	heads := s.KVHeads
	if tp > 1 {
		heads = max(1, ceilDiv(s.KVHeads, tp))
	}
	return int64(heads) * int64(s.HeadDimK+s.HeadDimV)
}

// Family describes the attention and FFN structure in words.
func (s *Shape) Family() string {
	var parts []string
	switch {
	case s.MLA:
		parts = append(parts, "MLA")
	case s.KVHeads == 1 && s.Heads > 1:
		parts = append(parts, "MQA")
	case s.KVHeads < s.Heads:
		parts = append(parts, "GQA")
	default:
		parts = append(parts, "MHA")
	}
	if n := s.count(LayerSliding); n > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d layers sliding window %d", n, s.Layers, s.Window))
	}
	if n := s.count(LayerState); n > 0 {
		parts = append(parts, fmt.Sprintf("hybrid: %d/%d attention layers", s.Layers-n, s.Layers))
	}
	if s.Experts > 0 {
		parts = append(parts, fmt.Sprintf("MoE %d experts, %d active", s.Experts, s.ExpertsPerToken))
	}
	return strings.Join(parts, ", ")
}

// Validate checks the fields every computation relies on and names the
// first one that is missing or inconsistent.
func (s *Shape) Validate() error {
	checks := []struct {
		ok    bool
		field string
		why   string
	}{
		{s.Layers > 0, "num_hidden_layers", "must be positive"},
		{s.Hidden > 0, "hidden_size", "must be positive"},
		{s.Heads > 0, "num_attention_heads", "must be positive"},
		{s.Vocab > 0, "vocab_size", "must be positive"},
		{s.MLA || s.KVHeads > 0, "num_key_value_heads", "must be positive"},
		{s.MLA || s.KVHeads <= s.Heads, "num_key_value_heads", fmt.Sprintf("(%d) exceeds num_attention_heads (%d)", s.KVHeads, s.Heads)},
		{s.MLA || s.KVHeads == 0 || s.Heads%s.KVHeads == 0, "num_key_value_heads", fmt.Sprintf("(%d) does not divide num_attention_heads (%d)", s.KVHeads, s.Heads)},
		{s.HeadDimK > 0 && s.HeadDimV > 0, "head_dim", "must be positive (or hidden_size divisible by num_attention_heads)"},
		{len(s.Kinds) == s.Layers, "layer kinds", fmt.Sprintf("cover %d of %d layers", len(s.Kinds), s.Layers)},
		{s.count(LayerSliding) == 0 || s.Window > 0, "sliding_window", "must be positive for sliding layers"},
		{s.Experts == 0 || (s.ExpertsPerToken > 0 && s.ExpertsPerToken <= s.Experts), "num_experts_per_tok", fmt.Sprintf("(%d) must be in 1..%d", s.ExpertsPerToken, s.Experts)},
	}
	for _, c := range checks {
		if !c.ok {
			return fmt.Errorf("%s %s", c.field, c.why)
		}
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
