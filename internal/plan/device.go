package plan

import (
	"fmt"
	"github.com/servebench/servebench/internal/perfmodel"
	"math"
)

// device plans the workload on one device type.
func (p *planner) device(d *Device) DeviceResult {
	r := DeviceResult{Device: d.Name, Kind: d.Kind, Usable: d.Usable(), Supported: true, Unsourced: p.unsourced(d)}
	if why := p.unsupported(d); why != "" {
		r.Supported, r.Verdict, r.Bottleneck, r.Reasons = false, "unsupported", "-", []string{why}
		return r
	}
	r.Budget = p.budget(d, p.ctx, p.seqs)
	r.Fits = r.Budget.Total <= r.Usable
	r.MaxSeqs = p.maxSeqs(d, p.ctx)
	r.MaxContext = p.maxContext(d, p.seqs)
	if p.eng.paged {
		r.KVPool = p.kvPool(d)
	}
	if !r.Fits {
		r.MinGPUs = p.minGPUs(d)
	}
	if r.MaxSeqs > 0 { // with nothing resident there is nothing to time
		r.Perf = p.perf(d, r.MaxSeqs)
	}
	p.verdict(&r)
	r.Perf.round()
	return r
}

func (p *planner) unsupported(d *Device) string {
	switch {
	case p.eng.paged && d.Kind == KindApple:
		return "vLLM does not run on Apple GPUs"
	case p.eng.paged && d.Kind == KindCPU:
		return "vLLM's CPU backend is not modelled"
	case p.gpus > 1 && d.Kind != KindGPU:
		return fmt.Sprintf("%s is a single device: %d GPUs not possible", d.Name, p.gpus)
	case p.gpus > 1 && p.eng.tensorParallel && d.InterconnectGBs.Value <= 0:
		return "no interconnect bandwidth for tensor parallelism"
	}
	return ""
}

// unsourced lists the device numbers this plan uses that have no source.
func (p *planner) unsourced(d *Device) []string {
	var out []string
	add := func(name string, s Sourced, used bool) {
		if used && s.Source == "" {
			out = append(out, name)
		}
	}
	add("memory_gib", d.MemoryGiB, d.UsableGiB.Value <= 0)
	add("usable_gib", d.UsableGiB, d.UsableGiB.Value > 0)
	add("bandwidth_gbs", d.BandwidthGBs, true)
	class := p.computeClass(d)
	fp8 := class == "fp8" && d.FP8TFLOPS.Value > 0
	acc16 := class == "fp16acc" && d.FP16AccTFLOPS.Value > 0
	add("fp8_tflops", d.FP8TFLOPS, fp8)
	add("fp16_acc_tflops", d.FP16AccTFLOPS, acc16)
	add("bf16_tflops", d.BF16TFLOPS, !fp8 && !acc16)
	add("interconnect_gbs", d.InterconnectGBs, p.gpus > 1 && p.eng.tensorParallel)
	return out
}

// kvPool is vLLM's KV pool per GPU in tokens: what is left of
// (1 - headroom) of memory after weights, activations and runtime, in whole
// 16-token blocks.
func (p *planner) kvPool(d *Device) int64 {
	b := p.budget(d, p.ctx, p.seqs)
	if p.eng.kvOfFree {
		free := float64(d.Usable() - b.Weights - b.Activation - b.Runtime)
		return perfmodel.VLLMPoolTokens(free*(1-p.opt.Headroom), 0, 0, 0, float64(p.kv.PerToken()), vllmBlockTokens)
	}
	return perfmodel.VLLMPoolTokens(float64(d.Usable())*(1-p.opt.Headroom), float64(b.Weights),
		float64(b.Activation), float64(b.Runtime), float64(p.kv.PerToken()), vllmBlockTokens)
}

// minGPUs is the fewest GPUs (2, 4, 8 or 16) over which the workload fits.
func (p *planner) minGPUs(d *Device) int {
	for _, n := range []int{2, 4, 8, 16} {
		if n <= p.gpus {
			continue
		}
		o := p.opt
		o.GPUs = n
		q, err := newPlanner(p.s, p.w, o)
		if err == nil && q.unsupported(d) == "" && q.fits(d, q.ctx, q.seqs) {
			return n
		}
	}
	return 0
}

// perf estimates the workload: concurrency users each sending a prompt and
// reading the completion, batch of them decoding together.
func (p *planner) perf(d *Device, fit int64) Perf {
	r := p.roofline(d)
	users := int64(p.w.Concurrency)
	batch := min(users, p.seqs)
	if p.eng.paged {
		batch = min(batch, fit)
	}
	batch = max(batch, 1)
	in, out := int64(p.w.PromptTokens), int64(p.w.OutputTokens)
	pre, step := r.prefill(in), r.decode(batch, in+out/2)
	perf := Perf{Batch: batch, PrefillS: perfmodel.PrefillTime(r.m, in, r.m.PrefillChunk), PrefillBound: pre.Bound(d.Kind == KindCPU),
		Step: step, StepS: step.Total(), DecodeBound: step.Bound(d.Kind == KindCPU),
		Crossover: r.crossover(in + out/2), CrossoverShort: r.crossover(1)}
	// A prefill sharing a step with the batch's decodes (chunked prefill)
	// replaces one decode step: it adds the prefill less that step.
	stall := max(0, perf.PrefillS-perf.StepS)
	l := closedLoop{users: users, batch: batch, out: out, pre: perf.PrefillS, step: perf.StepS, stall: stall, req: r.m.Request}
	perf.TPOTS = l.tpot()
	perf.TTFTP50S, perf.TTFTP95S, perf.TTFTBurstS = l.ttft()
	perf.DecodeTPS = 1 / perf.TPOTS
	perf.E2ES = perf.TTFTP50S + float64(out-1)*perf.TPOTS
	perf.AggregateTPS = l.outputTPS(perf.E2ES)
	if math.IsInf(perf.StepS, 0) || math.IsNaN(perf.StepS) {
		perf.DecodeTPS, perf.AggregateTPS = 0, 0
	}
	return perf
}

func (p *planner) verdict(r *DeviceResult) {
	f := r.Perf
	timed := f.Batch > 0
	ttftFail := timed && p.w.TTFT > 0 && f.TTFTP95S > p.w.TTFT
	tpsFail := timed && p.w.MinTPS > 0 && f.DecodeTPS < p.w.MinTPS
	if !r.Fits {
		r.Reasons = append(r.Reasons, fmt.Sprintf("needs %s per device, %s usable", FormatBytes(r.Budget.Total), FormatBytes(r.Usable)))
	}
	if waiting := int64(p.w.Concurrency) - f.Batch; timed && waiting > 0 {
		r.Reasons = append(r.Reasons, fmt.Sprintf("%d of %d users wait: %d at a time fit", waiting, p.w.Concurrency, f.Batch))
	}
	if ttftFail {
		r.Reasons = append(r.Reasons, fmt.Sprintf("TTFT p95 %s > %s (prefill bound by %s)", FormatSeconds(f.TTFTP95S), FormatSeconds(p.w.TTFT), f.PrefillBound))
	}
	if tpsFail {
		r.Reasons = append(r.Reasons, fmt.Sprintf("decode %.1f tok/s per user < %.1f (step bound by %s)", f.DecodeTPS, p.w.MinTPS, f.DecodeBound))
	}
	r.Bottleneck = f.DecodeBound
	switch {
	case !timed:
		r.Bottleneck = "memory capacity"
	case !r.Fits:
		r.Bottleneck = "memory capacity"
	case tpsFail && f.TPOTS-f.StepS > f.StepS:
		r.Bottleneck = f.PrefillBound + " (prefills stall decode)"
	case !tpsFail && ttftFail:
		r.Bottleneck = f.PrefillBound
	}
	switch {
	case !r.Fits:
		r.Verdict = "does not fit"
	case ttftFail || tpsFail:
		r.Verdict = "misses"
	case p.w.TTFT > 0 || p.w.MinTPS > 0:
		r.Verdict = "meets"
	default:
		r.Verdict = "fits"
	}
}
