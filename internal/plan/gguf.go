package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"
)

// LoadGGUF reads a model's shape from a GGUF file's header; tensor data is
// not read. Parameter count and weight bytes come from the tensor infos.
func LoadGGUF(path string) (*Shape, error) {
	f, err := gguf.ParseGGUFFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a := f.Architecture()
	if a.Type != "model" {
		return nil, fmt.Errorf("%s: GGUF holds a %s, not a language model", path, a.Type)
	}
	if a.BlockCount == 0 || a.BlockCount > maxLayers {
		return nil, fmt.Errorf("%s: %s.block_count is %d", path, a.Architecture, a.BlockCount)
	}
	s := ggufDims(&a)
	// The model's own general.name, else the file's name.
	s.Name = f.Metadata().Name
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	ggufKinds(&a, s)
	ggufParams(f, s)
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func ggufDims(a *gguf.GGUFArchitecture) *Shape {
	s := &Shape{
		Arch:               a.Architecture,
		Layers:             int(a.BlockCount),
		Hidden:             int(a.EmbeddingLength),
		Heads:              int(a.AttentionHeadCount),
		KVHeads:            int(a.AttentionHeadCountKV),
		HeadDimK:           int(a.AttentionKeyLength),
		HeadDimV:           int(a.AttentionValueLength),
		Vocab:              int(a.VocabularyLength),
		MaxContext:         int(a.MaximumContextLength),
		Experts:            int(a.ExpertCount),
		ExpertsPerToken:    int(a.ExpertUsedCount),
		SharedExperts:      int(a.ExpertSharedCount),
		ExpertIntermediate: int(a.ExpertFeedForwardLength),
		Window:             int(a.AttentionSlidingWindow),
	}
	if len(a.FeedForwardLength) > 0 {
		s.Intermediate = int(a.FeedForwardLength[0])
	}
	for _, kv := range a.AttentionHeadCountKVs {
		s.KVHeads = max(s.KVHeads, int(kv))
	}
	if a.AttentionKeyValueLORARank > 0 {
		s.MLA, s.KVLoRARank = true, int(a.AttentionKeyValueLORARank)
		s.QLoRARank, s.RopeDim = int(a.AttentionQueryLORARank), int(a.RoPEDimensionCount)
	}
	return s
}

// ggufKinds resolves each layer: recurrent where the file gives it zero KV
// heads (or the whole model is recurrent), sliding where llama.cpp's
// sliding-window pattern says so, full otherwise.
func ggufKinds(a *gguf.GGUFArchitecture, s *Shape) {
	s.Kinds = make([]LayerKind, s.Layers)
	for i := range s.Kinds {
		switch {
		case a.AttentionRecurrent && !a.AttentionHybrid:
			s.Kinds[i] = LayerState
		case i < len(a.AttentionHeadCountKVs) && a.AttentionHeadCountKVs[i] == 0:
			s.Kinds[i] = LayerState
		case a.AttentionHybrid && a.FullAttentionInterval > 0 && (i+1)%int(a.FullAttentionInterval) != 0:
			s.Kinds[i] = LayerState
		case i < len(a.AttentionSlidingWindowLayers) && a.AttentionSlidingWindowLayers[i] && s.Window > 0:
			s.Kinds[i] = LayerSliding
		}
	}
	if s.count(LayerState) > 0 {
		// llama.cpp's recurrent state: a conv window and the SSM state.
		conv := int64(max(int(a.SSMConvolutionKernel)-1, 0)) * int64(a.SSMInnerSize+2*a.SSMGroupCount*a.SSMStateSize)
		s.StateElems = conv + int64(a.SSMStateSize)*int64(a.SSMInnerSize)
	}
}

func ggufParams(f *gguf.GGUFFile, s *Shape) {
	s.Params = int64(f.ModelParameters)
	s.CheckpointBytes = int64(f.ModelSize)
	s.ParamsSource = "GGUF header"
	md := f.Metadata()
	s.CheckpointFmt = strings.ToLower(strings.TrimPrefix(md.FileType.String(), "MOSTLY_"))
	s.CheckpointBits = float64(f.ModelBitsPerWeight)
	s.Tied = true
	for _, t := range f.TensorInfos {
		n := int64(t.Elements())
		switch {
		case t.Name == "output.weight":
			s.Tied = false
		case t.Name == "token_embd.weight":
			s.EmbedParams = n
		case strings.Contains(t.Name, "_exps."):
			s.ExpertParams += n
		}
	}
	s.ActiveParams = activeParams(s)
}
