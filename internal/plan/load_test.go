package plan

import (
	"math"
	"testing"
)

// planOne plans a workload on one device and returns its result.
func planOne(t *testing.T, model, dev string, w Workload, o Options) DeviceResult {
	t.Helper()
	r, err := Plan(loadModel(t, model), w, o, []Device{device(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	return r.Devices[0]
}

func fp8TP2() Options {
	o := defaultOptions(EngineVLLM)
	o.Weights, o.GPUs = "fp8", 2
	return o
}

// TestCompareThroughputWithinCap: the compared output throughput is the
// plan's own, users x output / E2E with the wait for a slot in the E2E,
// never above batch / TPOT. It used to leave the queue out of the E2E
// and predict 1,620 tok/s against a cap of 826.7 at 150 users.
func TestCompareThroughputWithinCap(t *testing.T) {
	w := Workload{PromptTokens: 5000, OutputTokens: 500, Concurrency: 150}
	dr := planOne(t, "Llama-3.1-70B", "H100-SXM", w, fp8TP2())
	capTPS := float64(dr.Perf.Batch) / dr.Perf.TPOTS
	if dr.Perf.Batch >= 150 {
		t.Fatalf("batch %d: the case needs users beyond the slots", dr.Perf.Batch)
	}
	var sum Summary
	sum.Points = make([]SummaryPoint, 1)
	pt := &sum.Points[0]
	pt.Load.Concurrency, pt.PromptTokensMean, pt.OutputTokensMean, pt.OutputTPS = 150, 5000, 500, 800
	d := device(t, "H100-SXM")
	c, err := Compare(loadModel(t, "Llama-3.1-70B"), fp8TP2(), &d, &sum)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Points[0].OutputTPS.Predicted
	if got > capTPS*(1+1e-5) || !approx(got, dr.Perf.AggregateTPS, 1e-5) {
		t.Errorf("compare predicts %.1f tok/s; the plan's cap is %.1f, its output %.1f", got, capTPS, dr.Perf.AggregateTPS)
	}
}

// TestTTFTContinuousAtSlotLimit: each user beyond the slots adds its share
// of a service to every user's TTFT, (N/B - 1) x service in all, so the
// curve has no cliff. It used to add a whole service to p50 only once half
// the users waited: 413 ms at 151 users, 46.8 s at 152.
func TestTTFTContinuousAtSlotLimit(t *testing.T) {
	o := fp8TP2()
	w := Workload{PromptTokens: 5000, OutputTokens: 500, Concurrency: 1}
	fit := planOne(t, "Llama-3.1-70B", "H100-SXM", w, o).MaxSeqs
	prev := 0.0
	for n := fit - 2; n <= 2*fit+2; n++ {
		w.Concurrency = int(n)
		f := planOne(t, "Llama-3.1-70B", "H100-SXM", w, o).Perf
		share := (f.PrefillS + float64(w.OutputTokens-1)*f.TPOTS) / float64(f.Batch)
		if prev > 0 && f.TTFTP50S-prev > 1.2*share {
			t.Errorf("TTFT p50 jumps from %.2f s to %.2f s at %d users (%d fit; one user's share %.2f s)", prev, f.TTFTP50S, n, fit, share)
		}
		prev = f.TTFTP50S
	}
	// Twice the users the slots hold: each waits about one service.
	w.Concurrency = int(2 * fit)
	f := planOne(t, "Llama-3.1-70B", "H100-SXM", w, o).Perf
	service := f.PrefillS + float64(w.OutputTokens-1)*f.TPOTS
	if wait := f.TTFTP50S - f.PrefillS; !approx(wait, service, 0.1) {
		t.Errorf("at %d users the wait is %.2f s, want about one service %.2f s", w.Concurrency, wait, service)
	}
}

// TestActivationNotDividedByTP: vLLM's profile run peaks at the same
// activation memory per GPU at TP 1, 2 and 4 (its logs); it used to be
// divided by the TP degree (973 MiB at TP 2 for Llama-3.1-70B).
func TestActivationNotDividedByTP(t *testing.T) {
	w := Workload{PromptTokens: 1000, OutputTokens: 100, Concurrency: 1}
	var first int64
	for _, tp := range []int{1, 2, 4} {
		o := defaultOptions(EngineVLLM)
		o.GPUs = tp
		got := planOne(t, "Llama-3.1-70B", "H100-SXM", w, o).Budget.Activation
		// 8192 x (3 x 28672 + 8 x 8192) x 2 B + 256 x 128256 x 4 B.
		if want := int64(8192*(3*28672+8*8192)*2 + 256*128256*4); got != want {
			t.Errorf("TP %d: activation %d B, want %d", tp, got, want)
		}
		if first == 0 {
			first = got
		}
	}
}

// TestDecodeReadsOneEmbeddingRow: a decode step reads one row of an untied
// input-embedding table per sequence, not the table (6.5% of
// Llama-3.1-8B's bytes); a tied table is the output head and is read.
func TestDecodeReadsOneEmbeddingRow(t *testing.T) {
	o := defaultOptions(EngineVLLM)
	o.Eff.StepOverhead = 0
	r := rooflineFor(t, "Llama-3.1-8B", "H100-SXM", o)
	bw := 3.35e12 * 0.8
	read := r.decode(1, 0).Memory * bw
	// Checkpoint bytes less the 128,256 x 4,096 BF16 table, plus one row,
	// plus one token's KV written.
	want := 16060522496.0 - 128256*4096*2 + 4096*2 + 131072
	if !approx(read, want, 1e-9) {
		t.Errorf("batch-1 decode reads %.0f B, want %.0f", read, want)
	}
	// Eight sequences read eight rows, not eight tables.
	if extra := r.decode(8, 0).Memory*bw - read; !approx(extra, 7*(4096*2+131072), 1e-6) {
		t.Errorf("seven more sequences add %.0f B", extra)
	}
}

// TestTTFTGrowsWithLoad: at 16-48 users TTFT is not flat: each user's
// prompt waits for the step in progress and queues behind others'.
func TestTTFTGrowsWithLoad(t *testing.T) {
	prev := 0.0
	for _, n := range []int{1, 16, 32, 48} {
		w := Workload{PromptTokens: 2000, OutputTokens: 200, Concurrency: n}
		f := planOne(t, "Llama-3.1-8B", "H100-SXM", w, defaultOptions(EngineVLLM)).Perf
		if !(f.TTFTP50S > prev*1.05) || math.IsNaN(f.TTFTP50S) {
			t.Errorf("%d users: TTFT p50 %.1f ms, not above %.1f ms", n, 1000*f.TTFTP50S, 1000*prev)
		}
		prev = f.TTFTP50S
	}
}
