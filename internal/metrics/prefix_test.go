package metrics

import (
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// cachedReq is req with the server's cached count: nil for none.
func cachedReq(id, ttft int64, prompt int, cached *int) *record.Record {
	r := req(id, 0, 0, ttft, 10, 1, 1)
	r.PromptTokens = prompt
	if cached != nil {
		r.Server = &record.ServerTiming{CachedTokens: cached}
	}
	return r
}

// TestPrefixCacheHitsAndMisses: hit rate and TTFT by hit and miss from
// scripted counts, the way vLLM reports them (hits only) and OpenAI
// (every request, 0 included); the table reads them.
func TestPrefixCacheHitsAndMisses(t *testing.T) {
	var a Aggregator
	// Three hits: 64 of 100, 96 of 100 and 32 of 100 cached; TTFTs 10, 20, 30.
	a.Add(cachedReq(1, 10, 100, new(64)))
	a.Add(cachedReq(2, 20, 100, new(96)))
	a.Add(cachedReq(3, 30, 100, new(32)))
	// A miss the server reported as 0 (OpenAI), TTFT 100.
	a.Add(cachedReq(4, 100, 100, new(0)))
	// Misses the server said nothing about (vLLM, SGLang), TTFTs 200, 300.
	a.Add(cachedReq(5, 200, 50, nil))
	a.Add(cachedReq(6, 300, 50, nil))
	// A failed request counts nowhere.
	a.Add(&record.Record{Schema: record.Schema, ID: 7, Phase: record.PhaseMeasured, EndNS: 1,
		Server: &record.ServerTiming{CachedTokens: new(50)}, Error: &record.Error{Class: record.ClassHTTP5xx}})

	p := a.Points()[0]
	pc := p.PrefixCache
	if pc == nil {
		t.Fatal("no prefix_cache though four requests reported")
	}
	if pc.Requests != 6 || pc.Reported != 4 || pc.Hits != 3 || pc.PromptTokens != 500 || pc.CachedTokens != 192 {
		t.Errorf("counts %+v; want 6 requests, 4 reported, 3 hits, 192 of 500 tokens", pc)
	}
	near(t, "hit rate", pc.HitRate, 192.0/500)
	near(t, "ttft hit p50", get(t, pc.TTFTHit, "p50"), 20)
	near(t, "ttft hit max", get(t, pc.TTFTHit, "max"), 30)
	near(t, "ttft miss p50", get(t, pc.TTFTMiss, "p50"), 200)
	near(t, "ttft miss min", get(t, pc.TTFTMiss, "min"), 100)
	for _, st := range []string{"p50", "p95", "p99"} {
		if _, ok := pc.TTFTHit.Get(st); !ok {
			t.Errorf("ttft hit %s missing", st)
		}
	}
	m, _ := LookupMetric("prefix_hit_rate")
	if v, n := m.Value(&p); v != pc.HitRate || n != 6 {
		t.Errorf("table reads hit rate %v over %d, want %v over 6", v, n, pc.HitRate)
	}
	if m, _ := LookupMetric("ttft_miss"); m.Dist(&p).Count != 3 {
		t.Errorf("table reads %d misses, want 3", m.Dist(&p).Count)
	}
}

// TestPrefixCacheAbsent: a point whose server reported no count has no
// prefix_cache, and the table reads nothing measured.
func TestPrefixCacheAbsent(t *testing.T) {
	var a Aggregator
	a.Add(cachedReq(1, 10, 100, nil))
	r := cachedReq(2, 10, 100, nil)
	r.Server = &record.ServerTiming{EvalCount: 2} // Ollama: timings, no count
	a.Add(r)
	p := a.Points()[0]
	if p.PrefixCache != nil {
		t.Errorf("prefix_cache %+v for a server that reported nothing", p.PrefixCache)
	}
	m, _ := LookupMetric("prefix_hit_rate")
	if v, n := m.Value(&p); v == v || n != 0 {
		t.Errorf("hit rate %v over %d, want NaN over 0", v, n)
	}
}
