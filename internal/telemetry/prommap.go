package telemetry

import (
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// ref names one series of a scrape: a family, optionally only its metrics
// carrying some labels, optionally the _sum of a histogram (TGI counts
// tokens only as histogram sums).
type ref struct {
	name    string
	match   map[string]string
	histSum bool
}

// engineMap is one engine's mapping table: for each common series, the
// names it may have, first present wins (newer names before older ones).
// Every metric matching a ref is aggregated over its label sets (replicas,
// data-parallel engines, tensor/pipeline ranks): counts and counters are
// summed, fractions averaged.
type engineMap struct {
	engine string
	// detect: any of these families present means this engine.
	detect []string

	running, waiting, kvUsage, hitRate []ref // gauges (kvUsage, hitRate: fractions)

	preemptions, promptTokens, genTokens, pcQueries, pcHits []ref // counters

	ttft, queue, e2e []string // histograms in seconds

	// clockLost is the built-in simulator's own counter of the seconds it
	// skipped because its host ran it late (internal/sim ClockLostMetric);
	// the simulator serves vLLM's names, so only that table has it.
	clockLost []ref

	// prefillTime and prefillTokens are histogram sums observed together
	// at each request's end (Server.PrefillSeconds, PrefillTokens).
	prefillTime, prefillTokens []ref
}

// engineMaps are the engines servebench knows, checked against each
// engine's metrics code (docs/METRICS.md, "Server metrics" has the table).
// Python servers expose a counter "x_total" as family "x" with sample
// "x_total"; expfmt files that sample under "x_total", the name used here.
var engineMaps = []engineMap{
	{
		engine:  "vllm",
		detect:  []string{"vllm:num_requests_running", "vllm:num_requests_waiting"},
		running: refs("vllm:num_requests_running"), waiting: refs("vllm:num_requests_waiting"),
		// kv_cache_usage_perc since vLLM 0.10; gpu_cache_usage_perc before.
		kvUsage:      refs("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
		preemptions:  refs("vllm:num_preemptions_total"),
		promptTokens: refs("vllm:prompt_tokens_total"), genTokens: refs("vllm:generation_tokens_total"),
		// prefix_cache_* since vLLM 0.10; gpu_prefix_cache_* in early v1.
		pcQueries:     refs("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
		pcHits:        refs("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
		ttft:          []string{"vllm:time_to_first_token_seconds"},
		queue:         []string{"vllm:request_queue_time_seconds"},
		e2e:           []string{"vllm:e2e_request_latency_seconds"},
		clockLost:     refs("servebench_sim_clock_lost_seconds_total"),
		prefillTime:   []ref{{name: "vllm:request_prefill_time_seconds", histSum: true}},
		prefillTokens: []ref{{name: "vllm:request_prompt_tokens", histSum: true}},
	},
	{
		engine:  "sglang",
		detect:  []string{"sglang:num_running_reqs", "sglang:num_queue_reqs"},
		running: refs("sglang:num_running_reqs"), waiting: refs("sglang:num_queue_reqs"),
		kvUsage: refs("sglang:token_usage"), hitRate: refs("sglang:cache_hit_rate"),
		// Both counted per finished request, the prompt's every token and
		// those found cached (summed over cache_source): the counter pair
		// the hit rate prefers to the gauge, which is per prefill batch.
		pcQueries: refs("sglang:prompt_tokens_total"), pcHits: refs("sglang:cached_tokens_total"),
		preemptions:  refs("sglang:num_retracted_requests_total"),
		promptTokens: refs("sglang:prompt_tokens_total"), genTokens: refs("sglang:generation_tokens_total"),
		ttft:  []string{"sglang:time_to_first_token_seconds"},
		queue: []string{"sglang:queue_time_seconds"},
		e2e:   []string{"sglang:e2e_request_latency_seconds"},
	},
	{
		engine:  "tgi",
		detect:  []string{"tgi_batch_current_size", "tgi_queue_size"},
		running: refs("tgi_batch_current_size"), waiting: refs("tgi_queue_size"),
		promptTokens: []ref{{name: "tgi_request_input_length", histSum: true}},
		genTokens:    []ref{{name: "tgi_request_generated_tokens", histSum: true}},
		queue:        []string{"tgi_request_queue_duration"},
		e2e:          []string{"tgi_request_duration"},
	},
	{
		engine:  "llamacpp",
		detect:  []string{"llamacpp:requests_processing", "llamacpp:requests_deferred"},
		running: refs("llamacpp:requests_processing"), waiting: refs("llamacpp:requests_deferred"),
		// Removed upstream in 2025; older builds still export it.
		kvUsage:      refs("llamacpp:kv_cache_usage_ratio"),
		promptTokens: refs("llamacpp:prompt_tokens_total"), genTokens: refs("llamacpp:tokens_predicted_total"),
	},
	{
		engine:  "trtllm",
		detect:  []string{"nv_trt_llm_request_metrics"},
		running: []ref{{name: "nv_trt_llm_request_metrics", match: map[string]string{"request_type": "scheduled"}}},
		waiting: []ref{{name: "nv_trt_llm_request_metrics", match: map[string]string{"request_type": "waiting"}}},
		kvUsage: []ref{{name: "nv_trt_llm_kv_cache_block_metrics", match: map[string]string{"kv_cache_block_type": "fraction"}}},
	},
}

func refs(names ...string) []ref {
	out := make([]ref, len(names))
	for i, n := range names {
		out[i] = ref{name: n}
	}
	return out
}

// detectEngine is the table whose series the scrape has; nil for none.
func detectEngine(fams map[string]*dto.MetricFamily) *engineMap {
	for i := range engineMaps {
		for _, n := range engineMaps[i].detect {
			if fams[n] != nil {
				return &engineMaps[i]
			}
		}
	}
	return nil
}

// mapServer reads the common series of em from a scrape.
func mapServer(em *engineMap, fams map[string]*dto.MetricFamily) *Server {
	s := &Server{Engine: em.engine}
	s.Running = pick(fams, em.running, false)
	s.Waiting = pick(fams, em.waiting, false)
	s.KVCacheUsage = pick(fams, em.kvUsage, true)
	s.PrefixCacheHitRate = pick(fams, em.hitRate, true)
	s.Preemptions = pick(fams, em.preemptions, false)
	s.SimClockLost = pick(fams, em.clockLost, false)
	s.PrefillSeconds = pick(fams, em.prefillTime, false)
	s.PrefillTokens = pick(fams, em.prefillTokens, false)
	s.PromptTokens = pick(fams, em.promptTokens, false)
	s.GenerationTokens = pick(fams, em.genTokens, false)
	s.PrefixCacheQueries = pick(fams, em.pcQueries, false)
	s.PrefixCacheHits = pick(fams, em.pcHits, false)
	s.TTFT = pickHist(fams, em.ttft)
	s.Queue = pickHist(fams, em.queue)
	s.E2E = pickHist(fams, em.e2e)
	return s
}

// pick is the first present ref's value over all its label sets: the sum,
// or the mean when mean (a fraction of each replica's own capacity).
func pick(fams map[string]*dto.MetricFamily, rs []ref, mean bool) *float64 {
	for _, r := range rs {
		f := fams[r.name]
		if f == nil {
			continue
		}
		sum, n := 0.0, 0
		for _, m := range f.GetMetric() {
			if !labelsMatch(m, r.match) {
				continue
			}
			v, ok := value(m)
			if r.histSum && m.Histogram != nil {
				v, ok = m.Histogram.GetSampleSum(), finite(m.Histogram.GetSampleSum())
			}
			if ok {
				sum += v
				n++
			}
		}
		if n == 0 {
			continue
		}
		if mean {
			sum /= float64(n)
		}
		return num(sum)
	}
	return nil
}

// pickHist is the first present histogram family summed over its label
// sets, bucket by bucket (a bound only some label sets have is dropped:
// its cumulative count would be wrong).
func pickHist(fams map[string]*dto.MetricFamily, names []string) *Histogram {
	for _, n := range names {
		f := fams[n]
		if f == nil {
			continue
		}
		var hs []*Histogram
		for _, m := range f.GetMetric() {
			if h := toHistogram(m.GetHistogram()); h != nil {
				hs = append(hs, h)
			}
		}
		if h := sumHistograms(hs); h != nil {
			return h
		}
	}
	return nil
}

// toHistogram converts a classic histogram; nil when m is none or holds a
// value JSON cannot.
func toHistogram(m *dto.Histogram) *Histogram {
	if m == nil || len(m.GetBucket()) == 0 {
		return nil
	}
	h := &Histogram{Count: float64(m.GetSampleCount()), Sum: m.GetSampleSum()}
	if m.SampleCountFloat != nil {
		h.Count = m.GetSampleCountFloat()
	}
	for _, b := range m.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		le := b.GetUpperBound()
		if !finite(c) {
			return nil
		}
		if finite(le) {
			h.Buckets = append(h.Buckets, Bucket{LE: le, Count: c})
		}
	}
	if !finite(h.Count) || !finite(h.Sum) {
		return nil
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].LE < h.Buckets[j].LE })
	return h
}

// sumHistograms adds histograms bucket by bucket, keeping only the bounds
// all of them have.
func sumHistograms(hs []*Histogram) *Histogram {
	if len(hs) == 0 {
		return nil
	}
	if len(hs) == 1 {
		return hs[0]
	}
	counts := map[float64]float64{}
	seen := map[float64]int{}
	out := &Histogram{}
	for _, h := range hs {
		out.Count += h.Count
		out.Sum += h.Sum
		for _, b := range h.Buckets {
			counts[b.LE] += b.Count
			seen[b.LE]++
		}
	}
	for le, c := range counts {
		if seen[le] == len(hs) {
			out.Buckets = append(out.Buckets, Bucket{LE: le, Count: c})
		}
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].LE < out.Buckets[j].LE })
	if !histFinite(out) {
		return nil
	}
	return out
}

// histFinite says whether JSON can hold every number of h.
func histFinite(h *Histogram) bool {
	if !finite(h.Count) || !finite(h.Sum) {
		return false
	}
	for _, b := range h.Buckets {
		if !finite(b.Count) {
			return false
		}
	}
	return true
}

// maxRawSeries bounds Sample.Raw for an unknown engine: telemetry.jsonl
// gets one line per scrape, and an exporter with thousands of series
// would make it the largest file of the run.
const maxRawSeries = 256

// rawSeries keeps an unknown engine's series: gauges, counters and
// untyped values as they are, histograms and summaries as _count and
// _sum. The first maxRawSeries keys in name order are kept.
func rawSeries(fams map[string]*dto.MetricFamily) map[string]float64 {
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	raw := map[string]float64{}
	for _, n := range names {
		for _, m := range fams[n].GetMetric() {
			if len(raw) >= maxRawSeries {
				return raw
			}
			addRaw(raw, n, m)
		}
	}
	return raw
}

func addRaw(raw map[string]float64, name string, m *dto.Metric) {
	put := func(n string, v float64) {
		if finite(v) {
			raw[seriesKey(n, m)] = v
		}
	}
	if v, ok := value(m); ok {
		put(name, v)
		return
	}
	if h := m.GetHistogram(); h != nil {
		put(name+"_count", float64(h.GetSampleCount()))
		put(name+"_sum", h.GetSampleSum())
	}
	if s := m.GetSummary(); s != nil {
		put(name+"_count", float64(s.GetSampleCount()))
		put(name+"_sum", s.GetSampleSum())
	}
}
