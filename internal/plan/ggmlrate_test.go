package plan

import "testing"

// TestPrefillComputeRate checks which tensor rate and efficiency prefill
// runs at: ggml's CUDA paths (llama.cpp, Ollama) on the FP16-accumulate
// rate with their own efficiency, everything else on BF16 (or FP8) with the
// common one, and an explicit --compute-efficiency applying everywhere.
func TestPrefillComputeRate(t *testing.T) {
	custom := func(e string, eff float64) Options {
		o := defaultOptions(e)
		o.Eff.Compute = eff
		return o
	}
	for _, tc := range []struct {
		name, engine, weights, dev string
		opt                        *Options
		want                       float64
	}{
		{"llama.cpp q4_0 on RTX 4090: FP16 accumulate", EngineLlamaCpp, "q4_0", "RTX-4090", nil, 330.3e12 * 0.44},
		{"Ollama f16 on RTX 3090: FP16 accumulate", EngineOllama, "f16", "RTX-3090", nil, 142e12 * 0.44},
		{"llama.cpp on H100: FP16 accumulate is the BF16 rate", EngineLlamaCpp, "q8_0", "H100-SXM", nil, 989e12 * 0.44},
		{"vLLM bf16 on RTX 4090 keeps FP32 accumulate", EngineVLLM, "bf16", "RTX-4090", nil, 165.2e12 * 0.55},
		{"vLLM fp8 on H100 keeps FP8", EngineVLLM, "fp8", "H100-SXM", nil, 1979e12 * 0.55},
		{"llama.cpp on MI300X (ROCm) keeps BF16", EngineLlamaCpp, "q4_0", "MI300X", nil, 0},
		{"Ollama on M2 Ultra (Metal) keeps BF16", EngineOllama, "q4_0", "M2-Ultra", nil, 0},
		{"explicit efficiency applies on FP16 accumulate", EngineLlamaCpp, "q4_0", "RTX-4090", ptr(custom(EngineLlamaCpp, 0.5)), 330.3e12 * 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions(tc.engine)
			if tc.opt != nil {
				o = *tc.opt
			}
			o.Weights = tc.weights
			want := tc.want
			if want == 0 { // non-NVIDIA: the catalog's BF16 rate x 0.55
				d := device(t, tc.dev)
				want = d.BF16TFLOPS.Value * 1e12 * DefaultComputeEff
			}
			r := rooflineFor(t, "Llama-3.1-8B", tc.dev, o)
			if !approx(r.m.Rates.FLOPS, want, 1e-9) {
				t.Errorf("prefill rate %.4g FLOP/s, want %.4g", r.m.Rates.FLOPS, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
