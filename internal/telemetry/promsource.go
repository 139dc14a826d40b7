package telemetry

import (
	"context"
	"fmt"
)

// ServerSource scrapes an engine's Prometheus page and maps it to the
// common server series (engine detected from the series present). It
// remembers the previous reading's counters: one going backwards is a
// server restart, reported as a server_restart event next to the reading.
type ServerSource struct {
	s    *scraper
	prev *Server
}

// NewServerSource scrapes ep, an engine's /metrics.
func NewServerSource(ep Endpoint) *ServerSource { return &ServerSource{s: newScraper(ep)} }

// Name implements Source.
func (p *ServerSource) Name() string { return "server metrics at " + p.s.ep.URL }

// Read implements Source.
func (p *ServerSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	fams, err := p.s.scrape(ctx)
	if err != nil {
		return nil, err
	}
	inst := p.s.ep.URL
	em := detectEngine(fams)
	if em == nil {
		return []Sample{{TNS: now, Source: KindServer, Instance: inst,
			Server: &Server{Engine: "unknown"}, Raw: rawSeries(fams)}}, nil
	}
	cur := mapServer(em, fams)
	out := []Sample{{TNS: now, Source: KindServer, Instance: inst, Server: cur}}
	if what := wentBack(p.prev, cur); what != "" {
		out = append(out, Sample{TNS: now, Source: KindEvent, Instance: inst, Event: &Event{
			Kind: EventServerRestart, Source: inst, Detail: what + " went backwards: the server restarted"}})
	}
	p.prev = cur
	return out, nil
}

// wentBack names the first cumulative series of cur below its value in
// prev ("" when none): counters, and histogram counts or buckets.
func wentBack(prev, cur *Server) string {
	if prev == nil || prev.Engine != cur.Engine {
		return ""
	}
	for _, c := range counterFields {
		if a, b := c.get(prev), c.get(cur); a != nil && b != nil && *b < *a {
			return fmt.Sprintf("%s (%g → %g)", c.name, *a, *b)
		}
	}
	for _, h := range histFields {
		if a, b := h.get(prev), h.get(cur); a != nil && b != nil && histBelow(b, a) {
			return fmt.Sprintf("%s count (%g → %g)", h.name, a.Count, b.Count)
		}
	}
	return ""
}

// histBelow says whether any count of b is below a's (same bound).
func histBelow(b, a *Histogram) bool {
	if b.Count < a.Count {
		return true
	}
	prev := map[float64]float64{}
	for _, x := range a.Buckets {
		prev[x.LE] = x.Count
	}
	for _, x := range b.Buckets {
		if c, ok := prev[x.LE]; ok && x.Count < c {
			return true
		}
	}
	return false
}

// counterField and histField name a cumulative series of Server, for
// reset detection and per-window deltas alike.
type counterField struct {
	name string
	get  func(*Server) *float64
}

type histField struct {
	name string
	get  func(*Server) *Histogram
}

var counterFields = []counterField{
	{"preemptions_total", func(s *Server) *float64 { return s.Preemptions }},
	{"prompt_tokens_total", func(s *Server) *float64 { return s.PromptTokens }},
	{"generation_tokens_total", func(s *Server) *float64 { return s.GenerationTokens }},
	{"prefix_cache_queries_total", func(s *Server) *float64 { return s.PrefixCacheQueries }},
	{"prefix_cache_hits_total", func(s *Server) *float64 { return s.PrefixCacheHits }},
	{"sim_clock_lost_seconds_total", func(s *Server) *float64 { return s.SimClockLost }},
	{"prefill_seconds_total", func(s *Server) *float64 { return s.PrefillSeconds }},
	{"prefill_prompt_tokens_total", func(s *Server) *float64 { return s.PrefillTokens }},
}

var histFields = []histField{
	{"ttft_seconds", func(s *Server) *Histogram { return s.TTFT }},
	{"queue_seconds", func(s *Server) *Histogram { return s.Queue }},
	{"e2e_seconds", func(s *Server) *Histogram { return s.E2E }},
}
