// Package telemetry observes the machine while a benchmark runs: the
// server's own Prometheus metrics, GPUs (NVML or a DCGM exporter), the
// host and the server process, and the load generator itself. Samples
// are taken on the records' clock (ns since the run epoch), written to the
// run directory's telemetry file (rundir.TelemetryFile, its format in
// docs/OUTPUT.md) as they come, and summarised per load point so that a
// result comes with its cause.
package telemetry

import "context"

// Source kinds, the values of Sample.Source.
const (
	KindServer = "server" // a Prometheus /metrics of the inference engine
	KindGPU    = "gpu"    // a local GPU through NVML, or one a DCGM exporter reports
	KindHost   = "host"   // the host and the server process (procfs or a node exporter)
	KindClient = "client" // the load generator itself
	KindEvent  = "event"  // something that happened: see Event
)

// Sample is one line of telemetry.jsonl: what one source read at one
// moment. Exactly one of Server, GPU, Host, Client or Event is set; a
// value a source could not read is absent (nil), never zero.
type Sample struct {
	// TNS is ns since the run epoch, the clock of the records' instants.
	TNS    int64  `json:"t_ns"`
	Source string `json:"source"`
	// Instance says which one of its kind: the scrape URL (credentials
	// redacted), "nvml", "dcgm:URL", "procfs", "node:URL", ...
	Instance string  `json:"instance,omitempty"`
	Server   *Server `json:"server,omitempty"`
	GPU      *GPU    `json:"gpu,omitempty"`
	Host     *Host   `json:"host,omitempty"`
	Client   *Client `json:"client,omitempty"`
	Event    *Event  `json:"event,omitempty"`
	// Raw keeps the scraped series of an engine no mapping table knows,
	// keyed by name{label="value",...}; absent for mapped engines.
	Raw map[string]float64 `json:"raw,omitempty"`
}

// Server is one scrape of an engine's metrics, mapped to common series.
// Gauges are current values; counters and histograms are cumulative, as
// the server exposes them (per-point figures are their deltas).
type Server struct {
	Engine string `json:"engine"` // vllm, sglang, tgi, llamacpp, trtllm, unknown

	Running      *float64 `json:"running,omitempty"`
	Waiting      *float64 `json:"waiting,omitempty"`
	KVCacheUsage *float64 `json:"kv_cache_usage,omitempty"` // fraction 0–1
	// PrefixCacheHitRate is a gauge some engines export (SGLang); others
	// give the two token counters below instead.
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`

	Preemptions        *float64 `json:"preemptions_total,omitempty"`
	PromptTokens       *float64 `json:"prompt_tokens_total,omitempty"`
	GenerationTokens   *float64 `json:"generation_tokens_total,omitempty"`
	PrefixCacheQueries *float64 `json:"prefix_cache_queries_total,omitempty"`
	PrefixCacheHits    *float64 `json:"prefix_cache_hits_total,omitempty"`
	// SimClockLost is the built-in simulator's: seconds it skipped,
	// busy, because its host ran it behind its schedule.
	SimClockLost *float64 `json:"sim_clock_lost_seconds_total,omitempty"`
	// PrefillSeconds and PrefillTokens are the sums of two histograms
	// the server observes together as each request finishes (vLLM's
	// request_prefill_time_seconds and request_prompt_tokens): their
	// increases over a window give its requests' prefill throughput.
	PrefillSeconds *float64 `json:"prefill_seconds_total,omitempty"`
	PrefillTokens  *float64 `json:"prefill_prompt_tokens_total,omitempty"`

	TTFT  *Histogram `json:"ttft_seconds,omitempty"`
	Queue *Histogram `json:"queue_seconds,omitempty"`
	E2E   *Histogram `json:"e2e_seconds,omitempty"`
}

// Histogram is a cumulative Prometheus histogram in seconds, as the
// server's clock measures them. The +Inf bucket is Count (JSON has no
// infinity), so Buckets holds the finite upper bounds only, ascending.
type Histogram struct {
	Count   float64  `json:"count"`
	Sum     float64  `json:"sum"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is one cumulative bucket: Count observations were ≤ LE.
type Bucket struct {
	LE    float64 `json:"le"`
	Count float64 `json:"count"`
}

// GPU is one reading of one GPU.
type GPU struct {
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	// Driver is the NVIDIA driver's version, where the source says.
	Driver           string   `json:"driver,omitempty"`
	MemoryUsedBytes  *float64 `json:"memory_used_bytes,omitempty"`
	MemoryTotalBytes *float64 `json:"memory_total_bytes,omitempty"`
	Utilization      *float64 `json:"utilization,omitempty"` // fraction 0–1 of the interval a kernel ran
	PowerW           *float64 `json:"power_w,omitempty"`
	// EnergyJ is the device's cumulative energy counter, where it has one.
	EnergyJ      *float64 `json:"energy_j,omitempty"`
	TemperatureC *float64 `json:"temperature_c,omitempty"`
	SMClockMHz   *float64 `json:"sm_clock_mhz,omitempty"`
	// Throttle names the clock-throttle reasons active at the reading
	// (power_cap, sw_thermal, idle, ...: docs/METRICS.md): [] when the
	// clocks run free, null when the source cannot tell. Not omitempty, so
	// that the two survive telemetry.jsonl and throttle_s is absent, not 0,
	// for a GPU whose reasons are unknown.
	Throttle []string `json:"throttle"`
}

// Host is one reading of the host and, when known, the server process
// with all its descendants.
type Host struct {
	ServerPID        int      `json:"server_pid,omitempty"`
	ServerProcesses  int      `json:"server_processes,omitempty"`
	ServerCPUPercent *float64 `json:"server_cpu_percent,omitempty"` // of one core, over the last interval
	ServerRSSBytes   *float64 `json:"server_rss_bytes,omitempty"`
	CPUPercent       *float64 `json:"cpu_percent,omitempty"` // the whole machine busy, of all its cores
	// StealPercent is the share of all cores' time the hypervisor gave to
	// other guests while this machine's vCPUs had work (steal), over the
	// last interval; it is part of CPUPercent.
	StealPercent  *float64 `json:"steal_percent,omitempty"`
	RAMTotalBytes *float64 `json:"ram_total_bytes,omitempty"`
	RAMUsedBytes  *float64 `json:"ram_used_bytes,omitempty"`
	RAMAvailBytes *float64 `json:"ram_available_bytes,omitempty"`
}

// Client is one reading of the load generator itself.
type Client struct {
	CPUPercent float64 `json:"cpu_percent"` // of one core, over the last interval
	Goroutines int     `json:"goroutines"`
	HeapBytes  float64 `json:"heap_bytes"`
	// DispatchLagMaxMS is the largest lag of an open-loop send behind its
	// schedule since the last reading; absent for closed loops.
	DispatchLagMaxMS *float64 `json:"dispatch_lag_max_ms,omitempty"`
}

// Event kinds.
const (
	EventServerRestart = "server_restart" // a counter went backwards
	EventScrapeFailed  = "scrape_failed"  // a source could not be read
	EventGap           = "gap"            // a source was silent for longer than two intervals
	EventOOM           = "oom"            // out of memory: the server's error text (no Xid means it)
	EventXid           = "xid"            // an NVML Xid error (GPU or driver fault)
	EventServerExit    = "server_exit"    // the server process went away
	EventThrottle      = "throttle"       // a GPU's clocks began to be throttled
	EventServerProcess = "server_process" // a process joined or left the server's tree (a runner restarted)
	EventRecovered     = "recovered"      // a source answers again after failing or falling silent
)

// Event is something that happened at a moment of the run.
type Event struct {
	Kind   string `json:"kind"`
	Source string `json:"source,omitempty"` // the Instance it concerns
	Detail string `json:"detail,omitempty"` // redacted, one line
}

// Source is one thing to sample. Read is called once per interval from
// the sampler's own goroutine, never the load generator's; it honours
// ctx's deadline. An error becomes a scrape_failed event and sampling
// goes on. A source that keeps state between reads (counter resets,
// CPU time deltas) keeps it itself.
type Source interface {
	// Name says what is sampled, for messages: "server metrics at URL".
	Name() string
	// Read takes one reading at now (ns on the run clock).
	Read(ctx context.Context, now int64) ([]Sample, error)
}

// Point is a load point's telemetry in summary.json (points[].telemetry).
// A source with no samples in the point's window is absent, never zero.
type Point struct {
	Server                *ServerPoint   `json:"server,omitempty"`
	GPUs                  []GPUPoint     `json:"gpus,omitempty"`
	Host                  *HostPoint     `json:"host,omitempty"`
	Client                *ClientPoint   `json:"client,omitempty"`
	EnergyJPerOutputToken *float64       `json:"energy_j_per_output_token,omitempty"`
	Events                map[string]int `json:"events,omitempty"`
}

// MeanMax is a gauge over a window.
type MeanMax struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// ServerPoint is the server's view of a point, summed over replicas.
type ServerPoint struct {
	Running            *MeanMax   `json:"running,omitempty"`
	Waiting            *MeanMax   `json:"waiting,omitempty"`
	KVCacheUsage       *MeanMax   `json:"kv_cache_usage,omitempty"`
	Preemptions        *float64   `json:"preemptions,omitempty"`
	PrefixCacheHitRate *float64   `json:"prefix_cache_hit_rate,omitempty"`
	TTFTMS             *Quantiles `json:"ttft_ms,omitempty"`
	QueueMS            *Quantiles `json:"queue_ms,omitempty"`
	// SimClockLostMS is the model time the built-in simulator skipped in
	// the window because its host could not keep its schedule (absent for
	// a real engine).
	SimClockLostMS *float64 `json:"sim_clock_lost_ms,omitempty"`
	// PrefillTPS is the server's own prefill throughput per request over
	// the window, in model time: the prompt tokens of the requests that
	// finished in it over the time they spent in prefill (vLLM's
	// histograms; absent where the engine has none).
	PrefillTPS *float64 `json:"prefill_tps,omitempty"`
}

// Quantiles are percentiles read from a histogram's bucket deltas over a
// window, in model time (ms). Bucket gives, per percentile, the bounds of
// the bucket it lies in: the resolution of the figure ([lo] alone when
// the bucket is the unbounded last one).
type Quantiles struct {
	Count  float64              `json:"count"`
	P50    float64              `json:"p50"`
	P90    float64              `json:"p90"`
	P99    float64              `json:"p99"`
	Bucket map[string][]float64 `json:"bucket_ms"`
}

// GPUPoint is one GPU over a point's window.
type GPUPoint struct {
	// Instance is the source that saw it ("nvml", "dcgm:URL"): two hosts'
	// GPU 0 are two GPUs.
	Instance           string   `json:"instance,omitempty"`
	Index              int      `json:"index"`
	Name               string   `json:"name,omitempty"`
	Driver             string   `json:"driver,omitempty"`
	MemoryUsedBytesMax *float64 `json:"memory_used_bytes_max,omitempty"`
	MemoryTotalBytes   *float64 `json:"memory_total_bytes,omitempty"`
	UtilizationMean    *float64 `json:"utilization_mean,omitempty"`
	PowerWMean         *float64 `json:"power_w_mean,omitempty"`
	PowerWMax          *float64 `json:"power_w_max,omitempty"`
	EnergyJ            *float64 `json:"energy_j,omitempty"`
	TemperatureCMax    *float64 `json:"temperature_c_max,omitempty"`
	// ThrottleS is how long (s, model time) the clocks were throttled,
	// by reason in ThrottleReasons.
	ThrottleS       *float64           `json:"throttle_s,omitempty"`
	ThrottleReasons map[string]float64 `json:"throttle_reasons_s,omitempty"`
}

// HostPoint is the host and the server process over a point's window.
type HostPoint struct {
	ServerRSSBytesMax    *float64 `json:"server_rss_bytes_max,omitempty"`
	ServerCPUPercentMean *float64 `json:"server_cpu_percent_mean,omitempty"`
	RAMAvailableBytesMin *float64 `json:"ram_available_bytes_min,omitempty"`
	HostCPUPercentMean   *float64 `json:"cpu_percent_mean,omitempty"`
	StealPercentMean     *float64 `json:"steal_percent_mean,omitempty"`
}

// ClientPoint is the load generator over a point's window.
type ClientPoint struct {
	CPUPercentMean float64 `json:"cpu_percent_mean"`
	CPUPercentMax  float64 `json:"cpu_percent_max"`
	GoroutinesMax  int     `json:"goroutines_max"`
}
