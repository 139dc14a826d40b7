package gguf

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// LlamaConfig sizes a random-weight llama-architecture model.
type LlamaConfig struct {
	Name       string
	Dim        int // embedding_length
	Layers     int // block_count
	FFN        int // feed_forward_length
	Heads      int // attention.head_count
	KVHeads    int // attention.head_count_kv
	Context    int // context_length
	VocabWords int // word pieces on top of the byte and character tokens
	Seed       uint64
}

// DefaultLlama is about 25M parameters: small enough to write in a second
// and to decode at ~100 tok/s on two CPU cores, large enough that prompt
// processing and decoding take measurable, distinct times.
var DefaultLlama = LlamaConfig{
	Name:       "servebench-random",
	Dim:        512,
	Layers:     8,
	FFN:        1536,
	Heads:      8,
	KVHeads:    4,
	Context:    4096,
	VocabWords: MaxVocabWords,
	Seed:       1,
}

// Weight scales (standard deviations of the uniform draws). See NewLlama.
const (
	embedStd  = 0.02
	layerStd  = 0.002
	outputStd = 0.3
	rmsEps    = 1e-5
	ropeBase  = 10000
	// fileTypeQ8_0 is llama.cpp's LLAMA_FTYPE_MOSTLY_Q8_0.
	fileTypeQ8_0 = 7
)

func (c LlamaConfig) validate() error {
	switch {
	case c.Dim <= 0 || c.Layers <= 0 || c.FFN <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.Context <= 0:
		return fmt.Errorf("llama: every size must be positive: %+v", c)
	case c.Dim%Q8Block != 0 || c.FFN%Q8Block != 0:
		return fmt.Errorf("llama: dim %d and ffn %d must be multiples of %d (Q8_0 blocks)", c.Dim, c.FFN, Q8Block)
	case c.Dim%c.Heads != 0 || (c.Dim/c.Heads)%2 != 0:
		return fmt.Errorf("llama: dim %d must split into %d heads of even size", c.Dim, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("llama: heads %d must be a multiple of kv heads %d", c.Heads, c.KVHeads)
	case c.KVHeads*(c.Dim/c.Heads)%Q8Block != 0:
		return fmt.Errorf("llama: kv width %d must be a multiple of %d", c.KVHeads*(c.Dim/c.Heads), Q8Block)
	}
	return nil
}

// NewLlama builds a deterministic random-weight llama model: Q8_0 matrices,
// F32 norms, a SentencePiece vocabulary. The same config gives the same
// bytes.
//
// The weights are random but shaped so that the model never ends its own
// answer: every token embedding carries a constant 1 in dimension 0, layer
// weights are small enough to leave that direction dominant, and the output
// rows of control, unknown and byte tokens point against it, so </s> (and any
// token that is not whole text) gets a logit near -20 while other logits
// spread with a standard deviation near 3. A benchmark then gets the number
// of output tokens it asked for, one text chunk per token.
func NewLlama(c LlamaConfig) (*File, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	vocab, err := BuildVocab(c.VocabWords)
	if err != nil {
		return nil, err
	}
	g := &weights{src: rand.NewPCG(c.Seed, 0x5e7eb3c4)}
	headDim := c.Dim / c.Heads
	kvDim := c.KVHeads * headDim
	n := len(vocab.Tokens)

	f := &File{KV: llamaKV(c, vocab)}
	add := func(t Tensor, err error) error {
		f.Tensors = append(f.Tensors, t)
		return err
	}
	if err := add(g.q8("token_embd.weight", c.Dim, n, embedRow)); err != nil {
		return nil, err
	}
	for l := range c.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		f.Tensors = append(f.Tensors, ones(p+"attn_norm.weight", c.Dim), ones(p+"ffn_norm.weight", c.Dim))
		for _, m := range []struct {
			name    string
			in, out int
		}{
			{"attn_q.weight", c.Dim, c.Dim},
			{"attn_k.weight", c.Dim, kvDim},
			{"attn_v.weight", c.Dim, kvDim},
			{"attn_output.weight", c.Dim, c.Dim},
			{"ffn_gate.weight", c.Dim, c.FFN},
			{"ffn_up.weight", c.Dim, c.FFN},
			{"ffn_down.weight", c.FFN, c.Dim},
		} {
			if err := add(g.q8(p+m.name, m.in, m.out, uniformRow(layerStd))); err != nil {
				return nil, err
			}
		}
	}
	f.Tensors = append(f.Tensors, ones("output_norm.weight", c.Dim))
	if err := add(g.q8("output.weight", c.Dim, n, outputRow(vocab.Types))); err != nil {
		return nil, err
	}
	return f, nil
}

func llamaKV(c LlamaConfig, v *Vocab) []KV {
	u := func(n int) uint32 { return uint32(n) }
	return []KV{
		{"general.architecture", "llama"},
		{"general.name", c.Name},
		{"general.description", "random weights written by servebench's mkgguf; for benchmarking engines, not a language model"},
		{"general.file_type", uint32(fileTypeQ8_0)},
		{"general.quantization_version", uint32(2)},
		{"general.alignment", uint32(DefaultAlignment)},
		{"llama.context_length", u(c.Context)},
		{"llama.embedding_length", u(c.Dim)},
		{"llama.block_count", u(c.Layers)},
		{"llama.feed_forward_length", u(c.FFN)},
		{"llama.attention.head_count", u(c.Heads)},
		{"llama.attention.head_count_kv", u(c.KVHeads)},
		{"llama.rope.dimension_count", u(c.Dim / c.Heads)},
		{"llama.rope.freq_base", float32(ropeBase)},
		{"llama.attention.layer_norm_rms_epsilon", float32(rmsEps)},
		{"llama.vocab_size", u(len(v.Tokens))},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", v.Tokens},
		{"tokenizer.ggml.scores", v.Scores},
		{"tokenizer.ggml.token_type", v.Types},
		{"tokenizer.ggml.bos_token_id", uint32(TokenIDBOS)},
		{"tokenizer.ggml.eos_token_id", uint32(TokenIDEOS)},
		{"tokenizer.ggml.unknown_token_id", uint32(TokenIDUnk)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}
}

// weights draws uniform values from one seeded stream, tensor after tensor,
// so the file depends only on the config.
type weights struct {
	src *rand.PCG
}

// uniform returns a draw from U(-a, a) with standard deviation std.
func (w *weights) uniform(std float64) float32 {
	// PCG's output is fixed by its definition; math/rand's derived
	// distributions are not promised to stay the same across Go releases.
	u := float64(w.src.Uint64()>>11) / (1 << 53)
	return float32(std * math.Sqrt(3) * (2*u - 1))
}

// rowFunc fills one row (one output unit's weights) of a matrix.
type rowFunc func(w *weights, row int, x []float32)

// q8 makes an in×out Q8_0 matrix (ggml shape [in, out]: rows of length in).
func (w *weights) q8(name string, in, out int, fill rowFunc) (Tensor, error) {
	x := make([]float32, in*out)
	for r := range out {
		fill(w, r, x[r*in:(r+1)*in])
	}
	data, err := EncodeQ8_0(x)
	return Tensor{Name: name, Shape: []uint64{uint64(in), uint64(out)}, Type: TypeQ8_0, Data: data}, err
}

func uniformRow(std float64) rowFunc {
	return func(w *weights, _ int, x []float32) {
		for i := range x {
			x[i] = w.uniform(std)
		}
	}
}

// embedRow is a token embedding: the constant direction plus noise.
func embedRow(w *weights, _ int, x []float32) {
	x[0] = 1
	for i := 1; i < len(x); i++ {
		x[i] = w.uniform(embedStd)
	}
}

// outputRow gives text tokens random rows orthogonal to the constant
// direction and every other token a row pointing against it.
func outputRow(types []int32) rowFunc {
	return func(w *weights, row int, x []float32) {
		if types[row] != TokenNormal {
			clear(x)
			x[0] = -1
			return
		}
		x[0] = 0
		for i := 1; i < len(x); i++ {
			x[i] = w.uniform(outputStd)
		}
	}
}

func ones(name string, n int) Tensor {
	x := make([]float32, n)
	for i := range x {
		x[i] = 1
	}
	return Tensor{Name: name, Shape: []uint64{uint64(n)}, Type: TypeF32, Data: EncodeF32(x)}
}

// Parameters counts the weights of f's tensors.
func (f *File) Parameters() uint64 {
	var n uint64
	for _, t := range f.Tensors {
		p := uint64(1)
		for _, d := range t.Shape {
			p *= d
		}
		n += p
	}
	return n
}
