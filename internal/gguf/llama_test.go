package gguf

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small is a quick model of the same layout as DefaultLlama.
var small = LlamaConfig{Name: "t", Dim: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2, Context: 256, VocabWords: 50, Seed: 3}

func TestLlamaParsesBack(t *testing.T) {
	f, err := NewLlama(small)
	if err != nil {
		t.Fatal(err)
	}
	gf, _ := writeAndParse(t, f)

	a := gf.Architecture()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"architecture", a.Architecture, "llama"},
		{"context", a.MaximumContextLength, uint64(256)},
		{"embedding", a.EmbeddingLength, uint64(64)},
		{"blocks", a.BlockCount, uint64(2)},
		{"ffn", a.FeedForwardLength, []uint64{128, 128}}, // one per layer
		{"heads", a.AttentionHeadCount, uint64(4)},
		{"kv heads", a.AttentionHeadCountKV, uint64(2)},
		{"rope dims", a.RoPEDimensionCount, uint64(16)},
		{"rms eps", a.AttentionLayerNormRMSEpsilon, float32(1e-5)},
		// specials, bytes, "▁", characters with and without "▁", and the
		// first 50 words with their prefixes.
		{"vocab", a.VocabularyLength, uint64(631)},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	tk := gf.Tokenizer()
	if tk.Model != "llama" || tk.BOSTokenID != TokenIDBOS || tk.EOSTokenID != TokenIDEOS || tk.UnknownTokenID != TokenIDUnk {
		t.Errorf("tokenizer: %+v", tk)
	}
	tokens, _ := gf.Header.MetadataKV.Get("tokenizer.ggml.tokens")
	toks := tokens.ValueArray().ValuesString()
	if toks[2] != "</s>" || toks[3] != "<0x00>" || toks[258] != "<0xFF>" || toks[len(toks)-1] == "" {
		t.Errorf("tokens start %q, end %q", toks[:4], toks[len(toks)-1])
	}
	if kv, _ := gf.Header.MetadataKV.Get("tokenizer.ggml.scores"); kv.ValueArray().Len != uint64(len(toks)) {
		t.Errorf("%d scores for %d tokens", kv.ValueArray().Len, len(toks))
	}

	// 1 embedding + 9 per layer + output norm + output.
	if got, want := len(gf.TensorInfos), 1+9*2+2; got != want {
		t.Fatalf("%d tensors, want %d", got, want)
	}
	var end uint64
	for i, ti := range gf.TensorInfos {
		want := f.Tensors[i]
		if ti.Name != want.Name || fmt.Sprint(ti.Dimensions) != fmt.Sprint(want.Shape) || uint32(ti.Type) != uint32(want.Type) {
			t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ti.Name, ti.Dimensions, ti.Type, want.Name, want.Shape, want.Type)
		}
		if ti.Bytes() != uint64(len(want.Data)) {
			t.Errorf("%s: parser size %d, data %d", ti.Name, ti.Bytes(), len(want.Data))
		}
		if ti.Offset%DefaultAlignment != 0 || ti.Offset < end {
			t.Errorf("%s: offset %d (previous tensor ends at %d)", ti.Name, ti.Offset, end)
		}
		end = ti.Offset + ti.Bytes()
	}
	if got := uint64(gf.ModelParameters); got != f.Parameters() {
		t.Errorf("parser counts %d parameters, we count %d", got, f.Parameters())
	}
	if got, want := uint64(gf.Size), uint64(gf.TensorDataStartOffset)+end; got != want {
		t.Errorf("file is %d bytes, data ends at %d", got, want)
	}
}

func TestLlamaDeterministic(t *testing.T) {
	sum := func(c LlamaConfig) [32]byte {
		f, err := NewLlama(c)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := f.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b.Bytes())
	}
	if a, b := sum(small), sum(small); a != b {
		t.Error("same config, different bytes")
	}
	other := small
	other.Seed++
	if sum(small) == sum(other) {
		t.Error("different seed, same bytes")
	}
}

func TestDefaultLlamaSize(t *testing.T) {
	f, err := NewLlama(DefaultLlama)
	if err != nil {
		t.Fatal(err)
	}
	// The engine test's timings assume about 25M parameters.
	if p := f.Parameters(); p < 24e6 || p > 28e6 {
		t.Errorf("%d parameters, want about 25M", p)
	}
}

func TestLlamaOutputSuppressesNonText(t *testing.T) {
	f, err := NewLlama(small)
	if err != nil {
		t.Fatal(err)
	}
	out := f.Tensors[len(f.Tensors)-1]
	w, err := decodeQ8_0(out.Data)
	if err != nil {
		t.Fatal(err)
	}
	row := func(i int) []float32 { return w[i*small.Dim : (i+1)*small.Dim] }
	// </s> and a byte token point against the constant direction (-1, give
	// or take the f16 rounding of the block scale).
	for _, id := range []int{TokenIDEOS, 3 + 'A'} {
		if r := row(id); r[0] > -0.999 || r[1] != 0 {
			t.Errorf("row %d starts %v, want -1, 0", id, r[:2])
		}
	}
	// A text token is orthogonal to it.
	if r := row(3 + 256); r[0] != 0 || r[1] == 0 {
		t.Errorf("text row starts %v", r[:2])
	}
}

func TestBuildVocab(t *testing.T) {
	v, err := BuildVocab(MaxVocabWords)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tok := range v.Tokens {
		if seen[tok] {
			t.Errorf("token %q appears twice", tok)
		}
		seen[tok] = true
	}
	for _, tok := range []string{"<unk>", "<s>", "</s>", "<0x41>", "▁", "▁the", "a", "▁a"} {
		if !seen[tok] {
			t.Errorf("token %q missing", tok)
		}
	}
	// Every word piece can be built by merging a shorter piece and a
	// character, as SentencePiece's merge loop needs.
	for _, tok := range v.Tokens {
		r := []rune(tok)
		if len(r) > 2 && r[0] == '▁' && !seen[string(r[:len(r)-1])] {
			t.Errorf("token %q has no prefix %q", tok, string(r[:len(r)-1]))
		}
	}
	// servebench's synthetic prompts are made of these words; each must be
	// one token so that prompt lengths carry over to this model.
	words, err := os.ReadFile(filepath.Join("..", "tokenize", "words.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range strings.Fields(string(words)) {
		if !seen["▁"+w] {
			t.Errorf("prompt word %q is not a token", w)
		}
	}
	if _, err := BuildVocab(MaxVocabWords + 1); err == nil {
		t.Error("too many words: no error")
	}
}

func TestLlamaRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*LlamaConfig)
	}{
		{"dim not a block multiple", func(c *LlamaConfig) { c.Dim = 48 }},
		{"heads do not divide dim", func(c *LlamaConfig) { c.Heads = 3 }},
		{"kv heads do not divide heads", func(c *LlamaConfig) { c.KVHeads = 3 }},
		{"zero layers", func(c *LlamaConfig) { c.Layers = 0 }},
		{"vocab too big", func(c *LlamaConfig) { c.VocabWords = MaxVocabWords + 1 }},
	} {
		cfg := small
		c.mod(&cfg)
		if _, err := NewLlama(cfg); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
