package calib

import (
	"math"
	"testing"

	"github.com/servebench/servebench/internal/perfmodel"
)

// TestFitSharedRecoversEfficiencies: gaps made by the shared roofline at
// compute 0.5, bandwidth 0.7, 2 ms a step and 30 ms a request, from
// decode steps at several batches and contexts and steps that prefill a
// prompt beside decodes, give those values back.
func TestFitSharedRecoversEfficiencies(t *testing.T) {
	peak := perfmodel.Model{Attention: perfmodel.Attention{FullLayers: 32},
		Rates:      perfmodel.Rates{FLOPS: 1e15, Bandwidth: 3e12},
		TokenFLOPs: 2 * 7e9, WeightBytes: 14e9, KVLayerBytes: 4096, DecodePairFLOPs: 16384, PrefillPairFLOPs: 16384}
	truth := peak
	truth.Rates.FLOPS, truth.Rates.Bandwidth = 0.5e15, 0.7*3e12
	truth.Overheads = perfmodel.Overheads{Step: 0.002, Request: 0.030}
	f := &Fit{}
	for i := range 40 {
		prompt := []int64{200, 600, 1500}[i%3]
		r := request{prompt: int(prompt)}
		r.first = 1e3 * (truth.Request + truth.StepTime(truth.Chunk(0, prompt, false)))
		f.reqs, f.lone = append(f.reqs, r), append(f.lone, i)
		for _, batch := range []int{1, 3, 6} {
			var parts []part
			for s := range batch {
				parts = append(parts, part{cached: int64(300 + 50*i + 10*s), q: 1, decode: true})
			}
			for _, withPrefill := range []bool{false, true} {
				ps := parts
				if withPrefill {
					ps = append(append([]part(nil), parts...), part{q: prompt})
				}
				var b perfmodel.Batch
				for _, p := range ps {
					b.Add(truth.Chunk(p.cached, p.q, p.decode))
				}
				f.gaps = append(f.gaps, gap{req: i, ms: 1e3 * truth.StepTime(b), parts: ps})
			}
		}
	}
	sh, err := f.FitShared(peak, Options{Bootstrap: 8})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"compute_efficiency": 0.5, "bandwidth_efficiency": 0.7, "step_overhead_ms": 2, "request_overhead_ms": 30}
	for _, p := range sh.Params {
		if math.Abs(p.Value/want[p.Name]-1) > 0.05 {
			t.Errorf("%s = %.4g, want %v", p.Name, p.Value, want[p.Name])
		}
	}
}
