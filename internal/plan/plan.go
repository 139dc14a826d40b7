package plan

import (
	"errors"
	"fmt"
	"github.com/servebench/servebench/internal/perfmodel"
	"strings"
)

// Workload is what a plan must serve. A serving objective (internal/slo)
// maps onto it: prompt and output lengths, concurrent users, a TTFT p95
// target and a per-user decode-speed target.
type Workload struct {
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	Concurrency  int `json:"concurrency"`
	// Context is the per-sequence context to provision; 0 means prompt +
	// output.
	Context int `json:"context"`
	// TTFT is the p95 time-to-first-token target in seconds; 0 = none.
	TTFT float64 `json:"ttft_target_s,omitempty"`
	// MinTPS is the per-user decode speed target in tokens/s; 0 = none.
	MinTPS float64 `json:"min_tps_per_user,omitempty"`
}

// Defaults for Options, each a stated assumption.
const (
	// DefaultHeadroom keeps 10% of usable memory free: vLLM's default
	// gpu_memory_utilization of 0.90, room for CUDA graphs and fragments.
	DefaultHeadroom = 0.10
	// The efficiency defaults are the shared performance model's
	// (internal/perfmodel), where their reasons are written.
	DefaultComputeEff       = perfmodel.DefaultComputeEff
	DefaultBandwidthEff     = perfmodel.DefaultBandwidthEff
	DefaultInterconnectEff  = perfmodel.DefaultInterconnectEff
	DefaultAllReduceLatency = perfmodel.DefaultAllReduceLatency
)

// Efficiency holds the factors that turn peak rates into achievable ones.
type Efficiency struct {
	// Compute is the achieved fraction of peak tensor FLOP/s in prefill;
	// negative means the engine's default.
	Compute float64 `json:"compute"`
	// ComputeFP16Acc, when set, replaces Compute on the FP16-accumulate
	// rate (llama.cpp and Ollama on NVIDIA GPUs); the engine's default
	// fills it when Compute is not given.
	ComputeFP16Acc   float64 `json:"compute_fp16_accumulate,omitempty"`
	Bandwidth        float64 `json:"bandwidth"`
	Interconnect     float64 `json:"interconnect"`
	AllReduceLatency float64 `json:"allreduce_latency_s"`
	// StepOverhead is host time per forward pass; negative means the
	// engine's default.
	StepOverhead float64 `json:"step_overhead_s"`
	// RequestOverhead is time per request outside engine steps (API
	// server, template, tokenization, first chunk); negative means the
	// engine's default.
	RequestOverhead float64 `json:"request_overhead_s"`
}

// DefaultEfficiency returns the documented defaults.
func DefaultEfficiency() Efficiency {
	return Efficiency{Compute: -1, Bandwidth: DefaultBandwidthEff,
		Interconnect: DefaultInterconnectEff, AllReduceLatency: DefaultAllReduceLatency, StepOverhead: -1, RequestOverhead: -1}
}

// Options choose the engine, formats and hardware layout.
type Options struct {
	Engine  string
	Weights string // weight format; "" = the checkpoint's
	KVType  string // "" or "auto" = the engine's default
	// GPUs is the tensor-parallel degree for vLLM, or the number of GPUs
	// llama.cpp/Ollama split the layers across.
	GPUs int
	// Parallel is llama.cpp's/Ollama's slot count; 0 = Concurrency.
	Parallel int
	Headroom float64
	Eff      Efficiency
}

type planner struct {
	s           *Shape
	w           Workload
	opt         Options
	eng         engineSpec
	format      Format
	weightBytes int64
	weightBasis string
	kvType      KVType
	kv          kvModel
	gpus        int
	ctx, seqs   int64
	warnings    []string
}

func newPlanner(s *Shape, w Workload, o Options) (*planner, error) {
	p := &planner{s: s, w: w, opt: o, gpus: max(1, o.GPUs)}
	var err error
	if p.eng, err = lookupEngine(o.Engine); err != nil {
		return nil, err
	}
	if err := p.resolveWorkload(); err != nil {
		return nil, err
	}
	if err := p.resolveFormats(); err != nil {
		return nil, err
	}
	if p.opt.Eff.StepOverhead < 0 {
		p.opt.Eff.StepOverhead = p.eng.overheads.Step
	}
	if p.opt.Eff.Compute < 0 {
		p.opt.Eff.Compute, p.opt.Eff.ComputeFP16Acc = DefaultComputeEff, p.eng.cudaComputeEff
	}
	if p.opt.Eff.RequestOverhead < 0 {
		p.opt.Eff.RequestOverhead = p.eng.overheads.Request
	}
	p.kv = newKVModel(s, p.kvType, p.eng, p.gpus)
	return p, p.checkOptions()
}

// ErrContext reports a context beyond what the model supports.
var ErrContext = errors.New("context exceeds the model's maximum")

func (p *planner) resolveWorkload() error {
	w := &p.w
	if w.PromptTokens < 1 || w.OutputTokens < 1 || w.Concurrency < 1 {
		return fmt.Errorf("prompt tokens (%d), output tokens (%d) and concurrency (%d) must be at least 1", w.PromptTokens, w.OutputTokens, w.Concurrency)
	}
	if w.Context == 0 {
		w.Context = w.PromptTokens + w.OutputTokens
	}
	if w.Context < w.PromptTokens+w.OutputTokens {
		return fmt.Errorf("context %d is shorter than prompt + output (%d)", w.Context, w.PromptTokens+w.OutputTokens)
	}
	if m := p.s.MaxContext; m > 0 && w.Context > m {
		return fmt.Errorf("%w: context %d > %d (the model's maximum context)", ErrContext, w.Context, m)
	}
	p.ctx, p.seqs = int64(w.Context), int64(w.Concurrency)
	if !p.eng.paged && p.opt.Parallel > 0 {
		p.seqs = int64(p.opt.Parallel)
	}
	return nil
}

func (p *planner) resolveFormats() error {
	name := p.opt.Weights
	if name == "" {
		name = p.s.CheckpointFmt
	}
	f, err := LookupFormat(name)
	if err != nil && name == p.s.CheckpointFmt && p.s.CheckpointBits > 0 {
		f, err = Format{Name: strings.ToUpper(name), Bits: p.s.CheckpointBits, Compute: "bf16", Source: "GGUF header"}, nil
	}
	if err != nil {
		return err
	}
	p.format = f
	p.weightBytes, p.weightBasis = p.weights(strings.EqualFold(name, p.s.CheckpointFmt))
	return p.resolveKV()
}

// weights is the resident weight size: the checkpoint's own size when the
// format is the checkpoint's, else parameters x bits per weight.
func (p *planner) weights(sameAsCheckpoint bool) (int64, string) {
	if sameAsCheckpoint && p.s.CheckpointBytes > 0 {
		return p.s.CheckpointBytes, "checkpoint tensor bytes"
	}
	bits := p.format.Bits
	if !p.format.KeepsEmbeddings16 {
		return int64(float64(p.s.Params) * bits / 8), fmt.Sprintf("%s params x %.4g bits", FormatCount(p.s.Params), bits)
	}
	emb := p.s.EmbedParams
	if !p.s.Tied {
		emb *= 2
	}
	n := int64(float64(p.s.Params-emb)*bits/8) + emb*2
	return n, fmt.Sprintf("%s params x %.4g bits, embeddings and head in 16-bit", FormatCount(p.s.Params-emb), bits)
}

func (p *planner) resolveKV() error {
	name := strings.ToLower(p.opt.KVType)
	if name == "" || name == "auto" {
		name = p.eng.defaultKV
	}
	if name == "auto" { // vLLM: the model's dtype, 16-bit for quantized models
		name = "bf16"
		if p.s.CheckpointFmt == "fp16" {
			name = "fp16"
		}
	}
	t, err := LookupKVType(name)
	if err != nil {
		return err
	}
	if t.Engines != "all" && !strings.Contains(t.Engines, p.eng.name) {
		return fmt.Errorf("KV-cache type %s is not offered by %s (offered by: %s)", t.Name, p.eng.title, t.Engines)
	}
	p.kvType = t
	return nil
}

func (p *planner) checkOptions() error {
	o := p.opt
	switch {
	case CheckHeadroom(o.Headroom) != nil:
		return CheckHeadroom(o.Headroom)
	case bad(o.Eff.Compute) || bad(o.Eff.Bandwidth) || bad(o.Eff.Interconnect):
		return fmt.Errorf("efficiency factors must be in (0, 1]: compute %v, bandwidth %v, interconnect %v", o.Eff.Compute, o.Eff.Bandwidth, o.Eff.Interconnect)
	case o.Eff.AllReduceLatency < 0 || o.Eff.StepOverhead < 0 || o.Eff.RequestOverhead < 0:
		return errors.New("all-reduce latency, step overhead and request overhead must not be negative")
	case p.gpus > 64:
		return fmt.Errorf("%d GPUs: at most 64 are modelled", p.gpus)
	case p.eng.tensorParallel && p.gpus > 1 && !p.s.MLA && p.s.Heads%p.gpus != 0:
		return fmt.Errorf("tensor parallel %d does not divide the %d attention heads", p.gpus, p.s.Heads)
	}
	return nil
}

// CheckHeadroom refuses a headroom (a fraction of usable memory kept
// free) outside 0..90%.
func CheckHeadroom(h float64) error {
	if h < 0 || h > 0.9 {
		return fmt.Errorf("headroom %.0f%% is outside 0..90%%", 100*h)
	}
	return nil
}

func bad(f float64) bool { return !(f > 0 && f <= 1) }
