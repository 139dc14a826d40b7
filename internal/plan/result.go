package plan

import (
	"fmt"
	"math"
)

// Schema names the plan's JSON output.
const Schema = "servebench.plan/v1"

// Result is a complete plan: the model, what it needs, and each device.
type Result struct {
	Schema      string         `json:"schema"`
	Model       ModelInfo      `json:"model"`
	Workload    Workload       `json:"workload"`
	Engine      EngineInfo     `json:"engine"`
	Needs       Needs          `json:"needs"`
	Devices     []DeviceResult `json:"devices"`
	Assumptions Efficiency     `json:"assumptions"`
	// Predictions are the workload's figures on each device, in a run
	// summary's terms (the same array servebench calibrate writes).
	Predictions []Prediction `json:"predictions"`
	Warnings    []string     `json:"warnings,omitempty"`
}

// ModelInfo describes the model as planned.
type ModelInfo struct {
	Name            string  `json:"name"`
	Arch            string  `json:"arch"`
	Family          string  `json:"family"`
	Layers          int     `json:"layers"`
	AttentionLayers int     `json:"attention_layers"`
	Hidden          int     `json:"hidden"`
	Heads           int     `json:"heads"`
	KVHeads         int     `json:"kv_heads"`
	HeadDim         int     `json:"head_dim"`
	MaxContext      int     `json:"max_context"`
	Params          int64   `json:"params"`
	ActiveParams    int64   `json:"active_params"`
	ParamsSource    string  `json:"params_source"`
	WeightFormat    string  `json:"weight_format"`
	BitsPerWeight   float64 `json:"bits_per_weight"`
	FormatSource    string  `json:"format_source"`
	WeightBytes     int64   `json:"weight_bytes"`
	WeightBasis     string  `json:"weight_basis"`
	KVType          string  `json:"kv_type"`
	KVBytesPerToken int64   `json:"kv_bytes_per_token"`
	KVFormula       string  `json:"kv_formula"`
	KVLatent        int     `json:"kv_latent,omitempty"` // MLA: latent + rope width
	StateBytes      int64   `json:"state_bytes_per_sequence,omitempty"`
}

// EngineInfo is the engine and layout planned for.
type EngineInfo struct {
	Name         string  `json:"name"`
	GPUs         int     `json:"gpus"`
	Layout       string  `json:"layout"`
	Slots        int64   `json:"sequences"`
	StepOverhead float64 `json:"step_overhead_s"`
}

// Needs is what the workload asks of any device.
type Needs struct {
	AggregateTPS   float64 `json:"aggregate_output_tps,omitempty"`
	DecodeSeconds  float64 `json:"decode_seconds_per_request,omitempty"`
	ContextTokens  int64   `json:"context_tokens"`
	KVTokensNeeded int64   `json:"kv_tokens"`
}

// DeviceResult is the plan on one device type.
type DeviceResult struct {
	Device     string   `json:"device"`
	Kind       string   `json:"kind"`
	Supported  bool     `json:"supported"`
	Usable     int64    `json:"usable_bytes"`
	Budget     Budget   `json:"budget"`
	Fits       bool     `json:"fits"`
	MaxSeqs    int64    `json:"max_sequences_at_context"`
	MaxContext int64    `json:"max_context_at_sequences"`
	KVPool     int64    `json:"kv_pool_tokens,omitempty"`
	MinGPUs    int      `json:"min_gpus,omitempty"`
	Perf       Perf     `json:"perf"`
	Verdict    string   `json:"verdict"`
	Bottleneck string   `json:"bottleneck"`
	Reasons    []string `json:"reasons,omitempty"`
	Unsourced  []string `json:"unsourced,omitempty"`
}

// Perf is the roofline estimate for the workload on one device.
type Perf struct {
	Batch        int64   `json:"batch"`
	PrefillS     float64 `json:"prefill_s"`
	PrefillBound string  `json:"prefill_bound"`
	TTFTP50S     float64 `json:"ttft_p50_s"`
	TTFTP95S     float64 `json:"ttft_p95_s"`
	TTFTBurstS   float64 `json:"ttft_burst_s"`
	Step         Terms   `json:"decode_step"`
	StepS        float64 `json:"decode_step_s"`
	DecodeBound  string  `json:"decode_bound"`
	TPOTS        float64 `json:"tpot_s"`
	DecodeTPS    float64 `json:"decode_tps_per_request"`
	AggregateTPS float64 `json:"aggregate_tps"`
	E2ES         float64 `json:"e2e_s"`
	Crossover    int64   `json:"compute_bound_batch"`
	// CrossoverShort is the compute-bound batch when KV reads are
	// negligible (1-token contexts): the weights-only crossover.
	CrossoverShort int64 `json:"compute_bound_batch_short_context"`
}

// Plan computes the memory budget and roofline estimates for a model and
// workload on each device.
func Plan(s *Shape, w Workload, o Options, devs []Device) (*Result, error) {
	p, err := newPlanner(s, w, o)
	if err != nil {
		return nil, err
	}
	res := &Result{Schema: Schema, Model: p.modelInfo(), Workload: p.w, Assumptions: p.opt.Eff,
		Engine: EngineInfo{Name: p.eng.title, GPUs: p.gpus, Layout: p.layout(), Slots: p.seqs, StepOverhead: p.opt.Eff.StepOverhead},
		Needs:  p.needs(), Warnings: append(append([]string(nil), s.Warnings...), p.warnings...)}
	for i := range devs {
		res.Devices = append(res.Devices, p.device(&devs[i]))
	}
	res.Predictions = predictions(p.w, res.Devices)
	return res, nil
}

func (p *planner) layout() string {
	switch {
	case p.gpus == 1:
		return "single device"
	case p.eng.tensorParallel:
		return fmt.Sprintf("tensor parallel over %d GPUs", p.gpus)
	}
	return fmt.Sprintf("layers split over %d GPUs (run in turn)", p.gpus)
}

func (p *planner) modelInfo() ModelInfo {
	s := p.s
	full := newKVModel(s, p.kvType, p.eng, 1)
	m := ModelInfo{Name: s.Name, Arch: s.Arch, Family: s.Family(), Layers: s.Layers, AttentionLayers: s.AttentionLayers(),
		Hidden: s.Hidden, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDimK, MaxContext: s.MaxContext,
		Params: s.Params, ActiveParams: s.ActiveParams, ParamsSource: s.ParamsSource,
		WeightFormat: p.format.Name, BitsPerWeight: p.format.Bits, FormatSource: p.format.Source,
		WeightBytes: p.weightBytes, WeightBasis: p.weightBasis, KVType: p.kvType.Name,
		KVBytesPerToken: full.PerToken(), KVFormula: kvFormula(s, p.kvType), StateBytes: full.stateSeq()}
	if s.MLA {
		m.KVLatent = s.KVLoRARank + s.RopeDim
	}
	return m
}

func kvFormula(s *Shape, t KVType) string {
	if s.MLA {
		return fmt.Sprintf("%d layers x (%d latent + %d rope) x %g B", s.AttentionLayers(), s.KVLoRARank, s.RopeDim, t.PerElem())
	}
	dim := fmt.Sprintf("%d", s.HeadDimK)
	if s.HeadDimK != s.HeadDimV {
		dim = fmt.Sprintf("(%d+%d)/2", s.HeadDimK, s.HeadDimV)
	}
	return fmt.Sprintf("2 (K,V) x %d layers x %d KV heads x %s x %g B", s.AttentionLayers(), s.KVHeads, dim, t.PerElem())
}

func (p *planner) needs() Needs {
	n := Needs{ContextTokens: p.ctx, KVTokensNeeded: p.ctx * p.seqs}
	if p.w.MinTPS > 0 {
		n.AggregateTPS = p.w.MinTPS * float64(p.w.Concurrency)
		n.DecodeSeconds = float64(p.w.OutputTokens) / p.w.MinTPS
	}
	return n
}

// binomQuantile is the q-quantile of Binomial(n, p): how many of n others
// are busy when each is busy with probability p.
func binomQuantile(n int64, p, q float64) int64 {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	}
	fn := float64(n)
	if v := fn * p * (1 - p); v > 25 { // normal approximation
		z := map[bool]float64{true: 1.6449, false: 0}[q > 0.9]
		return min(n, max(0, int64(math.Ceil(fn*p+z*math.Sqrt(v)))))
	}
	pmf := math.Pow(1-p, fn)
	cdf := pmf
	for k := int64(0); k < n; k++ {
		if cdf >= q {
			return k
		}
		pmf *= float64(n-k) / float64(k+1) * p / (1 - p)
		cdf += pmf
	}
	return n
}
