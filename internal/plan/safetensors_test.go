package plan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stFile builds a safetensors file: header only, with zero tensor data.
func stFile(t *testing.T, tensors map[string]Tensor) []byte {
	t.Helper()
	var off int64
	h := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	for name, tn := range tensors {
		size := tn.Elements() * map[string]int64{"BF16": 2, "F32": 4, "I32": 4, "F8_E4M3": 1}[tn.DType]
		tn.Offsets = []int64{off, off + size}
		off += size
		h[name] = tn
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(js)))
	b.Write(js)
	return b.Bytes()
}

func tinyTensors(dtype string, layers int) map[string]Tensor {
	m := map[string]Tensor{
		"model.embed_tokens.weight": {DType: dtype, Shape: []int64{100, 64}},
		"lm_head.weight":            {DType: dtype, Shape: []int64{100, 64}},
		"model.norm.weight":         {DType: dtype, Shape: []int64{64}},
	}
	for i := range layers {
		p := "model.layers." + string(rune('0'+i)) + "."
		for name, shape := range map[string][]int64{
			"self_attn.q_proj.weight": {64, 64}, "self_attn.k_proj.weight": {32, 64}, "self_attn.v_proj.weight": {32, 64},
			"self_attn.o_proj.weight": {64, 64}, "mlp.gate_proj.weight": {128, 64}, "mlp.up_proj.weight": {128, 64},
			"mlp.down_proj.weight": {64, 128}, "input_layernorm.weight": {64}, "post_attention_layernorm.weight": {64},
		} {
			m[p+name] = Tensor{DType: dtype, Shape: shape}
		}
	}
	return m
}

// TestSafetensorsHeaders counts parameters from shard headers: exact for
// float tensors, layers past num_hidden_layers left out; packed integer
// checkpoints give bytes, not parameters.
func TestSafetensorsHeaders(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", []byte(llamaTiny))
	// Two shards and a third layer the config does not have (an MTP-style
	// extra layer): it is not counted.
	all := tinyTensors("BF16", 3)
	a, b := map[string]Tensor{}, map[string]Tensor{}
	idx := map[string]string{}
	for name, tn := range all {
		if strings.Contains(name, "layers.0") || strings.Contains(name, "embed") {
			a[name], idx[name] = tn, "model-00001-of-00002.safetensors"
		} else {
			b[name], idx[name] = tn, "model-00002-of-00002.safetensors"
		}
	}
	write("model-00001-of-00002.safetensors", stFile(t, a))
	write("model-00002-of-00002.safetensors", stFile(t, b))
	js, _ := json.Marshal(map[string]any{"metadata": map[string]int64{"total_size": 1}, "weight_map": idx})
	write("model.safetensors.index.json", js)

	s, err := LoadHFModel(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	// 2 layers of (4096 + 2048 + 2048 + 4096 + 3 x 8192 + 128) + 2 x 6400 + 64
	want := int64(2*(4096+2048+2048+4096+3*8192+128) + 2*6400 + 64)
	if s.Params != want || s.ParamsSource != "safetensors headers" || s.CheckpointBytes != 2*want {
		t.Errorf("params %d (%s), bytes %d; want %d from headers, %d bytes", s.Params, s.ParamsSource, s.CheckpointBytes, want, 2*want)
	}
	if len(s.Warnings) != 0 { // the config-derived count agrees
		t.Errorf("warnings %q", s.Warnings)
	}

	// A packed-int4 checkpoint: I32 qweight tensors are not parameters.
	q := t.TempDir()
	os.WriteFile(filepath.Join(q, "config.json"), []byte(edit("quantization_config", `{"quant_method": "awq", "bits": 4}`)), 0o644)
	os.WriteFile(filepath.Join(q, "model.safetensors"), stFile(t, tinyTensors("I32", 2)), 0o644)
	s, err = LoadHFModel(filepath.Join(q, "config.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.ParamsSource != "estimated from config.json" || s.CheckpointBytes == 0 || s.CheckpointFmt != "awq" {
		t.Errorf("awq: %s, %d bytes, format %s", s.ParamsSource, s.CheckpointBytes, s.CheckpointFmt)
	}
}

// TestSafetensorsHeaderErrors checks the header reader's limits.
func TestSafetensorsHeaderErrors(t *testing.T) {
	le := func(n uint64) []byte { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, n); return b }
	file := func(js string) []byte { return append(le(uint64(len(js))), js...) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"short", []byte{1, 2}, "header length"},
		{"zero length", le(0), "out of range"},
		{"huge length", le(1 << 40), "out of range"},
		{"truncated", append(le(100), '{'), "safetensors header"},
		{"not json", append(le(3), "abc"...), "safetensors header"},
		{"bad offsets", file(`{"w": {"dtype": "F32", "shape": [2], "data_offsets": [8]}}`), "bad data_offsets"},
		{"negative shape", file(`{"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}`), "bad shape"},
		{"tensor not an object", file(`{"w": 3}`), `safetensors tensor "w"`},
	}
	for _, tt := range tests {
		_, err := ReadSafetensorsHeader(bytes.NewReader(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestWeightBytes checks formats: checkpoint bytes when the format is the
// checkpoint's, else parameters x bits, with 16-bit embeddings for vLLM's
// quantized loaders.
func TestWeightBytes(t *testing.T) {
	s := loadModel(t, "Llama-3.1-8B")
	emb := 2 * int64(128256*4096)
	params := float64(8030261248)
	tests := []struct {
		format string
		want   int64
	}{
		{"", 16060522496},
		{"bf16", 16060522496},
		{"fp8", (8030261248 - emb) + 2*emb},
		{"awq", int64(float64(8030261248-emb)*(4+20.0/128)/8) + 2*emb},
		{"q8_0", int64(params * 8.5 / 8)},
		{"q4_k_m", int64(params * 4.8944 / 8)},
	}
	for _, tt := range tests {
		o := defaultOptions(EngineVLLM)
		o.Weights = tt.format
		p, err := newPlanner(s, Workload{PromptTokens: 10, OutputTokens: 10, Concurrency: 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		if p.weightBytes != tt.want {
			t.Errorf("%q: %d bytes, want %d", tt.format, p.weightBytes, tt.want)
		}
	}
}
