package metrics

import (
	"math"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// PrefixCache is what the server's per-request cached-token counts say
// about its prefix cache over a load point (docs/METRICS.md, "Prefix
// cache"). A point has one only when some request's server reported a
// count.
type PrefixCache struct {
	// HitRate is CachedTokens / PromptTokens: the share of the point's
	// prompt tokens the server did not have to prefill (0 when no
	// request's prompt tokens are known).
	HitRate      float64 `json:"hit_rate"`
	PromptTokens int64   `json:"prompt_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	// Requests are the completed requests counted; Reported those whose
	// server sent a cached count (0 included); Hits those with a count
	// above 0. vLLM and SGLang send nothing when nothing was cached, so
	// Requests − Reported are misses, not unknowns.
	Requests int `json:"requests"`
	Reported int `json:"reported_requests"`
	Hits     int `json:"hit_requests"`
	// TTFT of the requests that hit (cached > 0) and of those that missed.
	TTFTHit  stats.Dist `json:"ttft_hit_ms"`
	TTFTMiss stats.Dist `json:"ttft_miss_ms"`
}

// prefixAgg folds a point's completed requests into its PrefixCache.
type prefixAgg struct {
	prompt, cached           int64
	requests, reported, hits int
	ttftHit, ttftMiss        stats.Sample
}

// CacheHit says whether the server found some of r's prompt in its prefix
// cache: a request without a count is a miss (see PrefixCache).
func CacheHit(r *record.Record) bool {
	n, _ := r.Cached()
	return n > 0
}

func (a *prefixAgg) add(r *record.Record) {
	a.requests++
	n, ok := r.Cached()
	if ok {
		a.reported++
	}
	if r.PromptTokens > 0 {
		a.prompt += int64(r.PromptTokens)
		a.cached += int64(min(n, r.PromptTokens))
	}
	ttft, has := TTFT(r)
	switch {
	case n > 0:
		a.hits++
		if has {
			a.ttftHit.Add(ttft)
		}
	case has:
		a.ttftMiss.Add(ttft)
	}
}

// summary is the point's PrefixCache, nil when no request reported.
func (a *prefixAgg) summary() *PrefixCache {
	if a.reported == 0 {
		return nil
	}
	pc := &PrefixCache{PromptTokens: a.prompt, CachedTokens: a.cached, Requests: a.requests,
		Reported: a.reported, Hits: a.hits, TTFTHit: a.ttftHit.Summary(), TTFTMiss: a.ttftMiss.Summary()}
	if a.prompt > 0 {
		pc.HitRate = float64(a.cached) / float64(a.prompt)
	}
	return pc
}

// prefixHitRate is the metric table's reading of the hit rate, backed by
// the requests counted; NaN when the server reported nothing.
func prefixHitRate(p *PointSummary) (float64, int) {
	if p.PrefixCache == nil || p.PrefixCache.PromptTokens == 0 {
		return math.NaN(), 0
	}
	return p.PrefixCache.HitRate, p.PrefixCache.Requests
}

func ttftHit(p *PointSummary) stats.Dist {
	if p.PrefixCache == nil {
		return stats.Dist{}
	}
	return p.PrefixCache.TTFTHit
}

func ttftMiss(p *PointSummary) stats.Dist {
	if p.PrefixCache == nil {
		return stats.Dist{}
	}
	return p.PrefixCache.TTFTMiss
}
