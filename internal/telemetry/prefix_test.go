package telemetry

import (
	"context"
	"strings"
	"testing"
)

// TestPrefixCacheHitRateFromScrapes: the server's hit rate over a window
// is the increase of its hit counter over that of its query counter
// between scrapes of a scripted /metrics page, for vLLM's counters and
// SGLang's (whose cached_tokens_total appears only on the first hit);
// the gauge is the fallback.
func TestPrefixCacheHitRateFromScrapes(t *testing.T) {
	const vllm = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 1
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} %Q
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} %H
`
	const sglangBefore = `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0"} 1
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{model_name="m",tp_rank="0"} 0.9
# TYPE sglang:prompt_tokens counter
sglang:prompt_tokens_total{model_name="m"} 4096
`
	const sglangAfter = `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0"} 1
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{model_name="m",tp_rank="0"} 0.9
# TYPE sglang:prompt_tokens counter
sglang:prompt_tokens_total{model_name="m"} 8192
# TYPE sglang:cached_tokens counter
sglang:cached_tokens_total{cache_source="device",model_name="m"} 1536
sglang:cached_tokens_total{cache_source="host",model_name="m"} 512
`
	sub := func(page, q, h string) string {
		return strings.NewReplacer("%Q", q, "%H", h).Replace(page)
	}
	tests := []struct {
		name          string
		before, after string
		want          float64
	}{
		// 2000 tokens queried in the window, 1200 found: 0.6.
		{"vllm counters", sub(vllm, "1000", "200"), sub(vllm, "3000", "1400"), 0.6},
		// 4096 prompt tokens, 2048 cached (device and host) by counters that
		// did not exist at the baseline: 0.5, not the gauge's 0.9.
		{"sglang counters", sglangBefore, sglangAfter, 0.5},
		// No request finished in the window, so no query was counted:
		// the gauge is the figure.
		{"sglang no query", sglangBefore, sglangBefore, 0.9},
	}
	for _, tt := range tests {
		ps, srv := servePage(t, tt.before)
		src := NewServerSource(Endpoint{URL: srv.URL + "/metrics"})
		var samples []Sample
		for i, page := range []string{tt.before, tt.after} {
			ps.set(page)
			got, err := src.Read(context.Background(), int64(i)*2e9) // at 0 s and 2 s
			if err != nil {
				t.Fatal(err)
			}
			samples = append(samples, got...)
		}
		sp := summarizeServer(Window{From: 1e9, To: 3e9, Scale: 1, Samples: samples})
		if sp == nil {
			t.Fatalf("%s: no server figures", tt.name)
		}
		if got := sp.PrefixCacheHitRate; got == nil || !near(*got, tt.want) {
			t.Errorf("%s: hit rate %s, want %v", tt.name, fmtPtr(got), tt.want)
		}
	}
}
