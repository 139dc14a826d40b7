package sim

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// vLLM v1's histogram buckets (vllm/v1/metrics/loggers.py).
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
		20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	iterationTokenBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// Finish reasons, the values of vllm:request_success_total's label.
const (
	reasonStop   = "stop"
	reasonLength = "length"
	reasonAbort  = "abort"
	reasonError  = "error"
)

// metrics is the server's /metrics, with vLLM v1's names, types, buckets
// and labels (model_name, engine). Every duration is in the time base a
// client measures: model time / time_scale.
type metrics struct {
	reg       *prometheus.Registry
	scale     float64
	numBlocks int

	running, waiting, kvUsage                                   prometheus.Gauge
	preemptions, promptTokens, generationTokens, lost           prometheus.Counter
	success                                                     *prometheus.CounterVec
	ttft, itl, e2e, queueTime, prefill, decode, inference, iter prometheus.Histogram
	promptHist, genHist                                         prometheus.Histogram
	// prefixQueries and prefixHits: nil when prefix caching is off
	prefixQueries, prefixHits prometheus.Counter
	// lostNS is lost's value, for reading in process (Server.ClockLost)
	lostNS atomic.Int64
}

func newMetrics(cfg Config) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), scale: cfg.TimeScale, numBlocks: cfg.kvBlocks()}
	labels := prometheus.Labels{"model_name": cfg.Model.Name, "engine": "0"}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
		m.reg.MustRegister(g)
		return g
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		m.reg.MustRegister(c)
		return c
	}
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: labels})
		m.reg.MustRegister(h)
		return h
	}
	m.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
	m.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	m.kvUsage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	m.preemptions = counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	if cfg.Engine.EnablePrefixCaching {
		m.prefixQueries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.")
		m.prefixHits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	}
	// Not vLLM's: the simulator's own health, which telemetry reads
	// beside the vLLM series (ClockLostMetric).
	m.lost = counter(ClockLostMetric, "Seconds the simulated engine skipped while busy because its host ran it behind its schedule (the time scale is too high for the host): in them it served nothing.")
	m.promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.generationTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total",
		Help: "Count of successfully processed requests.", ConstLabels: labels}, []string{"finished_reason"})
	m.reg.MustRegister(m.success)
	for _, r := range []string{reasonStop, reasonLength, reasonAbort, reasonError} {
		m.success.WithLabelValues(r) // vLLM exports every reason from the start
	}
	m.ttft = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	m.itl = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets)
	m.e2e = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", requestLatencyBuckets)
	m.queueTime = hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", requestLatencyBuckets)
	m.prefill = hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", requestLatencyBuckets)
	m.decode = hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", requestLatencyBuckets)
	m.inference = hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", requestLatencyBuckets)
	m.iter = hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", iterationTokenBuckets)
	tokenBuckets := buckets125(cfg.EffectiveMaxModelLen())
	m.promptHist = hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets)
	m.genHist = hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokenBuckets)
	m.registerCacheInfo(cfg)
	return m
}

// registerCacheInfo exports vllm:cache_config_info, an info-style gauge
// fixed at 1 whose labels are the cache configuration.
func (m *metrics) registerCacheInfo(cfg Config) {
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:cache_config_info",
		Help: "Information of the LLMEngine CacheConfig", ConstLabels: prometheus.Labels{
			"engine": "0", "block_size": strconv.Itoa(cfg.Engine.BlockSize),
			"cache_dtype": "auto", "enable_prefix_caching": pyBool(cfg.Engine.EnablePrefixCaching),
			"gpu_memory_utilization": strconv.FormatFloat(cfg.Device.MemoryUtilization, 'g', -1, 64),
			"num_gpu_blocks":         strconv.Itoa(cfg.kvBlocks()), "num_cpu_blocks": "None",
		}})
	info.Set(1)
	m.reg.MustRegister(info)
}

// pyBool writes b as Python's str(bool) does, as vLLM's info labels hold it.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// buckets125 is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, … up to max.
func buckets125(limit int) []float64 {
	var out []float64
	for p := 1; p <= limit && p > 0; p *= 10 {
		for _, k := range []int{1, 2, 5} {
			if k*p <= limit {
				out = append(out, float64(k*p))
			}
		}
	}
	return out
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ClockLostMetric is the counter of time the simulator's loop skipped
// because its host ran it late, in the time base a client measures.
const ClockLostMetric = "servebench_sim_clock_lost_seconds_total"

func (m *metrics) clockLost(seconds float64) {
	m.lost.Add(seconds)
	m.lostNS.Add(int64(seconds * 1e9))
}

// queue refreshes the scheduler gauges.
func (m *metrics) queue(e *engine) {
	m.running.Set(float64(len(e.running)))
	m.waiting.Set(float64(e.queued()))
	if m.numBlocks > 0 {
		m.kvUsage.Set(float64(m.numBlocks-e.freeBlocks) / float64(m.numBlocks))
	}
}

// scheduled shows the step being computed: its batch running, the
// requests it left in the queue waiting.
func (m *metrics) scheduled(out *stepOut, e *engine) {
	m.running.Set(float64(out.Seqs))
	m.waiting.Set(float64(e.queued()))
}

// step records one finished engine step.
func (m *metrics) step(out *stepOut, e *engine) {
	m.queue(e)
	m.preemptions.Add(float64(out.Preempted))
	if m.prefixQueries != nil {
		m.prefixQueries.Add(float64(out.PrefixQueries))
		m.prefixHits.Add(float64(out.PrefixHits))
	}
	m.generationTokens.Add(float64(len(out.produced)))
	if out.Seqs > 0 {
		m.iter.Observe(float64(out.Decode + out.Prefill))
	}
	for _, s := range out.produced {
		if s.generated == 1 {
			m.promptTokens.Add(float64(s.prompt))
			m.ttft.Observe((s.firstToken - s.arrival) / m.scale)
		} else {
			m.itl.Observe((s.lastToken - s.prevToken) / m.scale)
		}
	}
}

// finished records a request that ended, successfully or not.
func (m *metrics) finished(s *seq, t reqTiming, err error) {
	reason := s.reason
	switch {
	case err == errAborted || err == errShutdown:
		reason = reasonAbort
	case err != nil:
		reason = reasonError
	}
	m.success.WithLabelValues(reason).Inc()
	m.e2e.Observe(t.E2E.Seconds())
	m.queueTime.Observe(t.Queue.Seconds())
	m.prefill.Observe(t.Prefill.Seconds())
	m.decode.Observe(t.Decode.Seconds())
	m.inference.Observe((t.Prefill + t.Decode).Seconds())
	m.promptHist.Observe(float64(s.prompt))
	m.genHist.Observe(float64(s.generated))
}
