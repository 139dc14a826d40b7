// Package sim owns the simulated continuous-batching LLM server: a
// vLLM-v1-style scheduler driven by a roofline step-time model, served over
// the OpenAI, vLLM and Ollama HTTP APIs with vLLM's Prometheus metrics. It is
// servebench's built-in target, a test fixture whose behaviour is known
// analytically, and (through Simulate) a what-if engine.
package sim

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/servebench/servebench/internal/perfmodel"

	"github.com/servebench/servebench/internal/yamlfield"
)

// Config is everything that shapes the simulator. The zero value is not
// usable; start from DefaultConfig. Durations derived from it are model time
// unless a name says otherwise; a client sees model time / TimeScale.
type Config struct {
	// Seed drives step jitter, natural output lengths and generated text.
	Seed int64 `yaml:"seed"`
	// TimeScale speeds the simulator up: the server sleeps model time /
	// TimeScale of wall time, so everything a client measures is divided by
	// it and every ratio is kept.
	TimeScale float64 `yaml:"time_scale"`
	// Jitter is the half-width of a uniform, multiplicative noise on each
	// step's duration (0.05 = ±5%); 0 makes step times exact.
	Jitter float64 `yaml:"jitter"`
	// Wander is a slow, multiplicative wander of the engine's speed, as a
	// server sharing its host shows: each step's time is divided by
	// 1 + Wander·X(t), X an Ornstein-Uhlenbeck process of unit variance
	// whose correlation time is WanderTime seconds of model time (idle
	// time included), floored at minWander. 0: a steady engine.
	Wander     float64 `yaml:"wander"`
	WanderTime float64 `yaml:"wander_time"`

	Model  ModelConfig  `yaml:"model"`
	Device DeviceConfig `yaml:"device"`
	Engine EngineConfig `yaml:"engine"`

	// Timer, when set, replaces the roofline built from Model and Device
	// as the step-time model (a model fitted to a measured run); the
	// scheduler, KV cache and HTTP serving are unchanged.
	Timer perfmodel.StepTimer `yaml:"-"`
}

// ModelConfig is the shape of the served model.
type ModelConfig struct {
	Name   string  `yaml:"name"`
	Params float64 `yaml:"params"`
	Layers int     `yaml:"layers"`
	Hidden int     `yaml:"hidden"`
	// Heads is the number of query heads; 0 means Hidden / HeadDim.
	Heads   int `yaml:"heads"`
	KVHeads int `yaml:"kv_heads"`
	HeadDim int `yaml:"head_dim"`
	// Intermediate is the MLP width and Vocab the vocabulary: with Hidden
	// they size vLLM's activation peak, which the KV cache cannot use.
	Intermediate int `yaml:"intermediate"`
	Vocab        int `yaml:"vocab"`
	// TiedEmbeddings: the input embedding is the output head. Untied, a
	// decode step reads one row of the input table per token, not the
	// table, so its bytes leave the weights each step streams.
	TiedEmbeddings bool    `yaml:"tied_embeddings"`
	BytesPerWeight float64 `yaml:"bytes_per_weight"`
	BytesPerKV     float64 `yaml:"bytes_per_kv"`
	// MaxModelLen caps prompt + output tokens; it is lowered to the KV
	// capacity when that is smaller (vLLM refuses to start instead).
	MaxModelLen int `yaml:"max_model_len"`
}

// DeviceConfig is the accelerator the model runs on.
type DeviceConfig struct {
	Name                string  `yaml:"name"`
	PeakTFLOPS          float64 `yaml:"peak_tflops"`
	MemBandwidthGBs     float64 `yaml:"mem_bandwidth_gbs"`
	ComputeEfficiency   float64 `yaml:"compute_efficiency"`
	BandwidthEfficiency float64 `yaml:"bandwidth_efficiency"`
	MemoryGiB           float64 `yaml:"memory_gib"`
	MemoryUtilization   float64 `yaml:"memory_utilization"`
	StepOverheadMS      float64 `yaml:"step_overhead_ms"`
}

// EngineConfig is the scheduler's configuration, named as in vLLM.
type EngineConfig struct {
	MaxNumSeqs          int `yaml:"max_num_seqs"`
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens"`
	BlockSize           int `yaml:"block_size"`
	// KVTokens overrides the KV capacity derived from device memory; 0
	// derives it. It is rounded down to whole blocks.
	KVTokens int `yaml:"kv_tokens"`
	// Preemption is PreemptRecompute or PreemptReject.
	Preemption string `yaml:"preemption"`
	// RequestOverheadMS is each request's time outside engine steps (API
	// server, chat template, tokenization, first chunk), in model
	// milliseconds: the request enters the scheduler this much after it
	// arrives.
	RequestOverheadMS float64 `yaml:"request_overhead_ms"`
	// OverheadIn is where a request spends that overhead: OverheadInQueue
	// (before it queues for a slot, as vLLM's API server tokenizes before
	// its scheduler sees the request) or OverheadInSlot (after it is given
	// a slot: Ollama's front server holds one of OLLAMA_NUM_PARALLEL and
	// only then hands the request to its runner). "" means OverheadInQueue.
	OverheadIn string `yaml:"overhead_in"`
	// EOSMeanTokens is the mean natural output length of a request that
	// does not set ignore_eos; 0 means requests never stop before max_tokens.
	EOSMeanTokens float64 `yaml:"eos_mean_tokens"`
	// EnablePrefixCaching keeps full prompt blocks in a prefix cache
	// (prefix.go) and skips their prefill when a later prompt starts with
	// them, as vLLM v1 does by default.
	EnablePrefixCaching bool `yaml:"enable_prefix_caching"`
}

// Where a request's overhead is spent (EngineConfig.OverheadIn).
const (
	OverheadInQueue = "queue"
	OverheadInSlot  = "slot"
)

// Preemption policies.
const (
	// PreemptRecompute frees the most recently admitted sequence's KV cache
	// and recomputes it later from the front of the queue, as vLLM does.
	PreemptRecompute = "recompute"
	// PreemptReject fails that sequence with an out-of-KV-cache error.
	PreemptReject = "reject"
)

// Defaults. The model is Llama-3.1-8B's shape in BF16 (its config.json);
// the device is an H100 SXM as the planner's catalog has it (79.22 GiB as
// CUDA reports 80 GB); efficiencies and overheads are the shared model's
// vLLM defaults (internal/perfmodel), so an idle simulator matches
// `servebench plan --engine vllm --gpu H100-SXM` for the same model.
const (
	// DefaultTimeScale makes the default demo sweep (concurrency 1–16, a few
	// dozen 512→128-token requests each) take seconds, while a batch-1 decode
	// step still lasts ~0.72 ms of wall time, above timer noise. servebench
	// converts what it measures back to model time (run.json time_scale).
	DefaultTimeScale = 10
	// ServeTimeScale is servebench sim's default: real time, because other
	// tools measuring it take wall time for the GPU's time.
	ServeTimeScale = 1
	// DefaultMaxNumSeqs is far below vLLM's 256/1024 on purpose: with 8
	// slots a concurrency sweep shows throughput saturating and queueing
	// starting at 8–16, the knee a newcomer should see.
	DefaultMaxNumSeqs = 8
	// DefaultMaxNumBatchedTokens is vLLM's default on large GPUs.
	DefaultMaxNumBatchedTokens = 8192
	// DefaultBlockSize is vLLM's KV block size.
	DefaultBlockSize = 16
	// DefaultEnablePrefixCaching is vLLM v1's default. Prompts that share
	// no full block (the default random prompts) never hit, so it leaves
	// their figures as they were without the cache.
	DefaultEnablePrefixCaching = true
	// MaxWander bounds Wander: at 0.5 one standard deviation halves the
	// engine's speed, past anything a server that still serves shows.
	MaxWander = 0.5
	// DefaultJitter gives percentiles a visible spread in the demo.
	DefaultJitter = 0.05
	// DefaultEOSMeanTokens is the mean natural length of an answer when a
	// request lets the model stop on its own.
	DefaultEOSMeanTokens = 256
	// DefaultModelName is what /v1/models and /api/tags list.
	DefaultModelName = "sim-llama-3.1-8b"
)

// DefaultConfig returns the default simulator configuration.
func DefaultConfig() Config {
	vllm, _ := perfmodel.LookupEngine(perfmodel.VLLM)
	return Config{
		Seed:      1,
		TimeScale: DefaultTimeScale,
		Jitter:    DefaultJitter,
		Model: ModelConfig{
			Name: DefaultModelName, Params: 8030261248, Layers: 32, Hidden: 4096, Heads: 32,
			KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 128256,
			BytesPerWeight: 2, BytesPerKV: 2, MaxModelLen: 131072,
		},
		Device: DeviceConfig{
			Name: "H100-SXM", PeakTFLOPS: 989, MemBandwidthGBs: 3350,
			ComputeEfficiency: perfmodel.DefaultComputeEff, BandwidthEfficiency: perfmodel.DefaultBandwidthEff,
			MemoryGiB: 79.22, MemoryUtilization: 0.9, StepOverheadMS: vllm.Step * 1e3,
		},
		Engine: EngineConfig{
			MaxNumSeqs: DefaultMaxNumSeqs, MaxNumBatchedTokens: DefaultMaxNumBatchedTokens,
			BlockSize: DefaultBlockSize, Preemption: PreemptRecompute,
			RequestOverheadMS: vllm.Request * 1e3, OverheadIn: OverheadInQueue, EOSMeanTokens: DefaultEOSMeanTokens,
			EnablePrefixCaching: DefaultEnablePrefixCaching,
		},
	}
}

// Bounds that keep token arithmetic far from overflow.
const (
	maxInt      = 1 << 30
	maxKVTokens = 1 << 40
)

// FieldError is a configuration error naming the YAML field (and so the
// flag) at fault, e.g. "engine.max_num_seqs".
type FieldError = yamlfield.Error

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate reports the first invalid field, or nil.
func (c Config) Validate() error {
	var errs []error
	pos := func(field string, v float64) {
		if !(v > 0) || v > 1e30 {
			errs = append(errs, fieldErr(field, "must be a positive number (got %v)", v))
		}
	}
	posInt := func(field string, v int) {
		if v <= 0 || v > maxInt {
			errs = append(errs, fieldErr(field, "must be an integer in [1, %d] (got %d)", maxInt, v))
		}
	}
	text := func(field, v string) {
		if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
			errs = append(errs, fieldErr(field, "must be printable UTF-8 text (got %q)", v))
		}
	}
	frac := func(field string, v float64) {
		if !(v > 0 && v <= 1) {
			errs = append(errs, fieldErr(field, "must be in (0, 1] (got %v)", v))
		}
	}
	pos("time_scale", c.TimeScale)
	if !(c.Jitter >= 0 && c.Jitter < 1) {
		errs = append(errs, fieldErr("jitter", "must be in [0, 1) (got %v)", c.Jitter))
	}
	if !(c.Wander >= 0 && c.Wander <= MaxWander) {
		errs = append(errs, fieldErr("wander", "must be in [0, %v] (got %v)", MaxWander, c.Wander))
	}
	if !(c.WanderTime >= 0) || (c.Wander > 0 && c.WanderTime == 0) || math.IsInf(c.WanderTime, 0) {
		errs = append(errs, fieldErr("wander_time", "must be a positive number of seconds when wander is set (got %v)", c.WanderTime))
	}
	m := c.Model
	if m.Name == "" {
		errs = append(errs, fieldErr("model.name", "must not be empty"))
	}
	text("model.name", m.Name)
	text("device.name", c.Device.Name)
	pos("model.params", m.Params)
	posInt("model.layers", m.Layers)
	posInt("model.hidden", m.Hidden)
	if m.Heads < 0 || m.Heads > maxInt {
		errs = append(errs, fieldErr("model.heads", "must be 0 (hidden / head_dim) or positive (got %d)", m.Heads))
	}
	posInt("model.kv_heads", m.KVHeads)
	posInt("model.head_dim", m.HeadDim)
	if m.Intermediate < 0 || m.Intermediate > maxInt || m.Vocab < 0 || m.Vocab > maxInt {
		errs = append(errs, fieldErr("model.intermediate", "model.intermediate and model.vocab must be integers in [0, %d] (got %d, %d)", maxInt, m.Intermediate, m.Vocab))
	}
	if float64(m.Vocab)*float64(m.Hidden) >= m.Params {
		errs = append(errs, fieldErr("model.vocab", "vocab x hidden (%d x %d) must be below model.params (%v): the embedding table is part of the parameters", m.Vocab, m.Hidden, m.Params))
	}
	pos("model.bytes_per_weight", m.BytesPerWeight)
	pos("model.bytes_per_kv", m.BytesPerKV)
	posInt("model.max_model_len", m.MaxModelLen)
	d := c.Device
	pos("device.peak_tflops", d.PeakTFLOPS)
	pos("device.mem_bandwidth_gbs", d.MemBandwidthGBs)
	frac("device.compute_efficiency", d.ComputeEfficiency)
	frac("device.bandwidth_efficiency", d.BandwidthEfficiency)
	pos("device.memory_gib", d.MemoryGiB)
	frac("device.memory_utilization", d.MemoryUtilization)
	if !(d.StepOverheadMS >= 0 && d.StepOverheadMS < 1e6) {
		errs = append(errs, fieldErr("device.step_overhead_ms", "must be >= 0 (got %v)", d.StepOverheadMS))
	}
	errs = append(errs, c.Engine.validate()...)
	if len(errs) > 0 {
		return errs[0]
	}
	return c.validateCapacity()
}

func (e EngineConfig) validate() []error {
	var errs []error
	if e.MaxNumSeqs <= 0 || e.MaxNumSeqs > maxInt {
		errs = append(errs, fieldErr("engine.max_num_seqs", "must be an integer in [1, %d] (got %d)", maxInt, e.MaxNumSeqs))
	}
	if e.MaxNumBatchedTokens <= 0 || e.MaxNumBatchedTokens > maxInt {
		errs = append(errs, fieldErr("engine.max_num_batched_tokens", "must be an integer in [1, %d] (got %d)", maxInt, e.MaxNumBatchedTokens))
	}
	if e.BlockSize <= 0 || e.BlockSize > 1<<16 {
		errs = append(errs, fieldErr("engine.block_size", "must be an integer in [1, 65536] (got %d)", e.BlockSize))
	}
	if e.KVTokens < 0 || e.KVTokens > maxKVTokens || (e.KVTokens > 0 && e.KVTokens < e.BlockSize) {
		errs = append(errs, fieldErr("engine.kv_tokens", "must be 0 (derive from device memory) or at least block_size (got %d)", e.KVTokens))
	}
	if e.Preemption != PreemptRecompute && e.Preemption != PreemptReject {
		errs = append(errs, fieldErr("engine.preemption", "must be %q or %q (got %q)", PreemptRecompute, PreemptReject, e.Preemption))
	}
	if !(e.RequestOverheadMS >= 0 && e.RequestOverheadMS < 1e6) {
		errs = append(errs, fieldErr("engine.request_overhead_ms", "must be >= 0 (got %v)", e.RequestOverheadMS))
	}
	if e.OverheadIn != "" && e.OverheadIn != OverheadInQueue && e.OverheadIn != OverheadInSlot {
		errs = append(errs, fieldErr("engine.overhead_in", "must be %q or %q (got %q)", OverheadInQueue, OverheadInSlot, e.OverheadIn))
	}
	if !(e.EOSMeanTokens >= 0 && e.EOSMeanTokens < 1e12) {
		errs = append(errs, fieldErr("engine.eos_mean_tokens", "must be >= 0 (got %v)", e.EOSMeanTokens))
	}
	return errs
}

// validateCapacity checks that the derived KV cache can hold one sequence.
func (c Config) validateCapacity() error {
	if c.Engine.KVTokens > 0 {
		return nil
	}
	if c.kvBlocks() < 1 {
		return fieldErr("device.memory_gib", "%.1f GiB × memory_utilization %.2f leaves no room for a KV cache after %.1f GB of weights; raise it, lower model.params, or set engine.kv_tokens",
			c.Device.MemoryGiB, c.Device.MemoryUtilization, c.WeightBytes()/1e9)
	}
	return nil
}
