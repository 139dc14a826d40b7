package plan

import (
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/gguf"
)

// workedExample is the example: 4 users, ~4,000-token prompts,
// ~300-token completions, TTFT p95 <= 1.5 s, >= 20 tok/s per user.
var workedExample = Workload{PromptTokens: 4000, OutputTokens: 300, Concurrency: 4, TTFT: 1.5, MinTPS: 20}

func TestWorkedExample(t *testing.T) {
	s := loadModel(t, "Llama-3.1-8B")
	r, err := Plan(s, workedExample, defaultOptions(EngineVLLM), Catalog())
	if err != nil {
		t.Fatal(err)
	}
	// 4 users x 20 tok/s = 80 tok/s in all; 300 tokens at 20 tok/s = 15 s.
	if r.Needs.AggregateTPS != 80 || r.Needs.DecodeSeconds != 15 || r.Needs.ContextTokens != 4300 {
		t.Errorf("needs %+v, want 80 tok/s, 15 s, 4,300 tokens", r.Needs)
	}
	b := findDevice(t, r, "H100-SXM").Budget
	// vLLM holds 4 x 4,304 tokens (16-token blocks) of 131,072 B each.
	if b.Weights != 16060522496 || b.KVTokens != 4304 || b.KV != 4*4304*131072 {
		t.Errorf("weights %d, kv tokens %d, kv %d", b.Weights, b.KVTokens, b.KV)
	}
	sum := b.Weights + b.KV + b.Activation + b.Runtime
	if b.Total != int64(float64(sum)/0.9) || b.Headroom != b.Total-sum {
		t.Errorf("total %d, headroom %d for %d before headroom", b.Total, b.Headroom, sum)
	}
	verdicts := map[string][2]string{
		"H100-SXM": {"meets", "memory bandwidth"},
		"H200":     {"meets", "memory bandwidth"},
		"L40S":     {"meets", "memory bandwidth"},
		"L4":       {"misses", "memory bandwidth"}, // 300 GB/s: ~11 tok/s per user
		"RTX-3090": {"misses", "compute"},          // fits, but a 4,000-token prefill takes ~1.8 s
		"M2-Ultra": {"unsupported", "-"},           // vLLM has no Metal backend
	}
	for name, want := range verdicts {
		d := findDevice(t, r, name)
		if d.Verdict != want[0] || d.Bottleneck != want[1] {
			t.Errorf("%s: %s / %s (%v), want %s / %s", name, d.Verdict, d.Bottleneck, d.Reasons, want[0], want[1])
		}
	}
	golden(t, "worked-example.json", mustJSON(t, r))
}

func findDevice(t *testing.T, r *Result, name string) DeviceResult {
	t.Helper()
	for _, d := range r.Devices {
		if d.Device == name {
			return d
		}
	}
	t.Fatalf("no %s in result", name)
	return DeviceResult{}
}

// TestVLLMPoolMatchesLog checks the vLLM budget against vLLM's own memory
// profile of Llama-3-8B on an H100 80GB at gpu_memory_utilization 0.9
// (vllm-project/vllm#10511): total 79.22 GiB, weights 14.96 GiB, KV cache
// 53.29 GiB.
func TestVLLMPoolMatchesLog(t *testing.T) {
	s := loadModel(t, "Llama-3.1-8B")
	w := Workload{PromptTokens: 1000, OutputTokens: 100, Concurrency: 1}
	p, err := newPlanner(s, w, defaultOptions(EngineVLLM))
	if err != nil {
		t.Fatal(err)
	}
	h100 := device(t, "H100-SXM")
	poolGiB := float64(p.kvPool(&h100)*131072) / gib
	if !approx(poolGiB, 53.29, 0.01) {
		t.Errorf("KV pool %.2f GiB, vLLM logged 53.29 GiB", poolGiB)
	}
	if got := float64(p.weightBytes) / gib; !approx(got, 14.96, 0.001) {
		t.Errorf("weights %.3f GiB, vLLM logged 14.96 GiB", got)
	}
}

// TestLlamaCppKV checks llama.cpp's allocation: cells = slots x num_ctx,
// each slot padded to 256, K and V in f16 per layer with n_embd_k_gqa =
// head_dim x kv_heads. For servebench's random test model (dim 512, 8
// layers, 8 heads, 4 KV heads) at num_ctx 4096 and 4 slots that is
// 2 x 8 x 256 x 16,384 x 2 B = 128 MiB.
func TestLlamaCppKV(t *testing.T) {
	s := &Shape{Arch: "llama", Layers: 8, Hidden: 512, Heads: 8, KVHeads: 4, HeadDimK: 64, HeadDimV: 64, Vocab: 32000,
		Intermediate: 1536, MaxContext: 4096, Kinds: make([]LayerKind, 8), Params: 25e6, CheckpointFmt: "q8_0"}
	tests := []struct {
		engine, kv string
		ctx, seqs  int64
		cells, kvB int64
	}{
		{EngineOllama, "f16", 4096, 4, 16384, 2 * 8 * 256 * 16384 * 2},
		{EngineLlamaCpp, "f16", 4096, 1, 4096, 2 * 8 * 256 * 4096 * 2},
		// 4,000 tokens per slot pad to 4,096.
		{EngineLlamaCpp, "f16", 4000, 2, 8192, 2 * 8 * 256 * 8192 * 2},
		// q8_0 rows: 256 elements = 8 blocks of 34 bytes.
		{EngineOllama, "q8_0", 4096, 4, 16384, 2 * 8 * 272 * 16384},
		// q4_0 rows: 8 blocks of 18 bytes.
		{EngineOllama, "q4_0", 4096, 1, 4096, 2 * 8 * 144 * 4096},
	}
	for _, tt := range tests {
		m := newKVModel(s, KVTypes[tt.kv], engineSpecs[tt.engine], 1)
		a := m.alloc(tt.ctx, tt.seqs)
		if a.Tokens != tt.cells || a.KV != tt.kvB {
			t.Errorf("%s %s ctx %d x %d: %d cells %d B, want %d cells %d B", tt.engine, tt.kv, tt.ctx, tt.seqs, a.Tokens, a.KV, tt.cells, tt.kvB)
		}
	}
}

// TestOllamaTestModel plans the GGUF that internal/gguf writes (the model
// the Ollama scripts serve) from its header and checks the figures Ollama
// 0.17.4 logged for it on CPU with OLLAMA_NUM_PARALLEL=4 and num_ctx 4096
// (n_vocab 2601):
//
//	load_tensors:          CPU model buffer size =    28.23 MiB
//	llama_kv_cache: size =  128.00 MiB (  4096 cells,   8 layers,  4/4 seqs), K (f16):   64.00 MiB, V (f16):   64.00 MiB
//	llama_context:        CPU compute buffer size =    19.01 MiB
//
// (4096 cells per stream: kv_unified = false, one stream per slot.) The
// weights are checked against the writer's own tensor bytes, which is what
// llama.cpp's model buffer holds, so a change of the test vocabulary does
// not break the test.
func TestOllamaTestModel(t *testing.T) {
	s, tensorBytes := writeTestGGUF(t)
	if s.Layers != 8 || s.Hidden != 512 || s.Heads != 8 || s.KVHeads != 4 || s.HeadDimK != 64 || s.MaxContext != 4096 || s.CheckpointFmt != "q8_0" {
		t.Fatalf("shape from GGUF header: %+v", s)
	}
	w := Workload{PromptTokens: 128, OutputTokens: 64, Concurrency: 4, Context: 4096}
	r, err := Plan(s, w, defaultOptions(EngineOllama), []Device{device(t, "CPU-DDR5-2ch")})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Devices[0].Budget
	if b.KV != 128*mib || b.KVTokens != 16384 {
		t.Errorf("KV %d B in %d cells, Ollama logged 128.00 MiB in 4 x 4096 cells", b.KV, b.KVTokens)
	}
	if b.Weights != tensorBytes {
		t.Errorf("weights %d B, the file's tensors hold %d B", b.Weights, tensorBytes)
	}
	// The compute buffer is an estimate: within 15% of the logged 19.01 MiB.
	if got := float64(b.Activation) / mib; !approx(got, 19.01, 0.15) {
		t.Errorf("compute buffer %.2f MiB, Ollama logged 19.01 MiB", got)
	}
	// No golden file here: the test model's vocabulary belongs to
	// internal/gguf; report's plan goldens cover the rendering.
}

func writeTestGGUF(t *testing.T) (*Shape, int64) {
	t.Helper()
	f, err := gguf.NewLlama(gguf.DefaultLlama)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "servebench-random.gguf")
	if _, err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	s, err := LoadGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(f.Parameters()); s.Params != want {
		t.Errorf("params from header %d, writer says %d", s.Params, want)
	}
	var n int64
	for _, tn := range f.Tensors {
		n += int64(len(tn.Data))
	}
	return s, n
}

// TestSlidingWindowLlamaCpp checks llama.cpp's SWA cache: global layers
// hold every cell, local layers min(cells, window + n_ubatch) per slot,
// padded to 256.
func TestSlidingWindowLlamaCpp(t *testing.T) {
	s := loadModel(t, "gemma-2-9b")
	m := newKVModel(s, KVTypes["f16"], engineSpecs[EngineLlamaCpp], 1)
	a := m.alloc(8192, 2)
	layerToken := int64(2 * 8 * 256 * 2)
	want := (21*16384 + 21*2*roundUp(4096+512, 256)) * layerToken
	if a.KV != want {
		t.Errorf("gemma-2 llama.cpp KV %d, want %d", a.KV, want)
	}
}

// TestTensorParallelShards checks per-GPU KV under vLLM tensor parallelism:
// KV heads split across ranks, replicated when fewer than ranks; an MLA
// latent is replicated on every rank.
func TestTensorParallelShards(t *testing.T) {
	tests := []struct {
		model string
		tp    int
		want  int64
	}{
		{"Llama-3.1-70B", 8, 327680 / 8},
		{"falcon-7b", 2, 8192}, // one KV head: each rank keeps a copy
		{"DeepSeek-V3", 8, 70272},
	}
	for _, tt := range tests {
		s := loadModel(t, tt.model)
		if got := newKVModel(s, KVTypes["bf16"], engineSpecs[EngineVLLM], tt.tp).PerToken(); got != tt.want {
			t.Errorf("%s TP %d: %d B/token per GPU, want %d", tt.model, tt.tp, got, tt.want)
		}
	}
}

// TestMaxFits checks the largest context and concurrency that fit.
func TestMaxFits(t *testing.T) {
	s := loadModel(t, "Llama-3.1-8B")
	p, err := newPlanner(s, Workload{PromptTokens: 4000, OutputTokens: 300, Concurrency: 4}, defaultOptions(EngineVLLM))
	if err != nil {
		t.Fatal(err)
	}
	d := device(t, "L4")
	n := p.maxSeqs(&d, 4300)
	if !p.fits(&d, 4300, n) || p.fits(&d, 4300, n+1) {
		t.Errorf("max seqs %d is not the edge", n)
	}
	c := p.maxContext(&d, 4)
	if !p.fits(&d, c, 4) || p.fits(&d, c+1, 4) {
		t.Errorf("max context %d is not the edge", c)
	}
	// 70B in BF16 fits no single 80 GB GPU; two H100s hold it.
	big := loadModel(t, "Llama-3.1-70B")
	r, err := Plan(big, Workload{PromptTokens: 1000, OutputTokens: 200, Concurrency: 8}, defaultOptions(EngineVLLM), []Device{device(t, "H100-SXM")})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Devices[0]; d.Fits || d.Bottleneck != "memory capacity" || d.MinGPUs != 4 {
		t.Errorf("70B on one H100: fits %v, %s, min GPUs %d (141 GB of weights needs 4 x 80 GB with headroom)", d.Fits, d.Bottleneck, d.MinGPUs)
	}
}

// TestDeepSeekGolden plans an MLA MoE model in FP8 over eight H200s.
func TestDeepSeekGolden(t *testing.T) {
	s := loadModel(t, "DeepSeek-V3")
	o := defaultOptions(EngineVLLM)
	o.GPUs = 8
	r, err := Plan(s, Workload{PromptTokens: 2000, OutputTokens: 500, Concurrency: 32, TTFT: 2, MinTPS: 15}, o,
		[]Device{device(t, "H200"), device(t, "H100-SXM"), device(t, "MI300X")})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "deepseek-v3-tp8.json", mustJSON(t, r))
}
