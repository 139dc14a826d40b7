package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// prefixSummary is the part of summary.json this test reads.
type prefixSummary struct {
	Points []struct {
		PrefixCache *struct {
			HitRate  float64 `json:"hit_rate"`
			Requests int     `json:"requests"`
			Hits     int     `json:"hit_requests"`
			TTFTHit  struct {
				P50 *float64 `json:"p50"`
			} `json:"ttft_hit_ms"`
			TTFTMiss struct {
				P50 *float64 `json:"p50"`
			} `json:"ttft_miss_ms"`
		} `json:"prefix_cache"`
		Telemetry *struct {
			Server *struct {
				HitRate *float64 `json:"prefix_cache_hit_rate"`
			} `json:"server"`
		} `json:"telemetry"`
	} `json:"points"`
}

func readPrefixSummary(t *testing.T, dir string) prefixSummary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s prefixSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 1 {
		t.Fatalf("%d points, want 1", len(s.Points))
	}
	return s
}

// TestSharedPrefixHitsTheSimulatorsCache: against the built-in simulator,
// whose prefix cache keeps full 16-token blocks, --shared-prefix K over
// G groups with one request at a time makes every request but the first
// of each group a hit on its prefix's blocks. The hit rate is then
// (N − G)/N · K/P, within one block of the template's header per hit
// (16/P), and a hit, which prefills P − K tokens instead of P, comes
// first sooner. A run without a shared prefix reports no cache at all.
func TestSharedPrefixHitsTheSimulatorsCache(t *testing.T) {
	const (
		n, groups = 24, 2
		p, k      = 4096, 3584
		block     = 16
	)
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := run(t, "run", "--concurrency", "1", "--requests", strconv.Itoa(n), "--prompt-tokens", strconv.Itoa(p),
		"--output-tokens", "4", "--shared-prefix", strconv.Itoa(k), "--prefix-groups", strconv.Itoa(groups), "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	pt := readPrefixSummary(t, dir).Points[0]
	pc := pt.PrefixCache
	if pc == nil {
		t.Fatalf("no prefix_cache in summary.json\n%s", stdout)
	}
	want := float64(n-groups) / n * k / p
	if tol := float64(block) / p; math.Abs(pc.HitRate-want) > tol {
		t.Errorf("hit rate %.4f, predicted %.4f ± %.4f", pc.HitRate, want, tol)
	}
	if pc.Requests != n || pc.Hits != n-groups {
		t.Errorf("%d hits of %d requests, want %d of %d (the first of each group misses)", pc.Hits, pc.Requests, n-groups, n)
	}
	// A miss prefills 4096 tokens, a hit 512: on the simulator's H100 about
	// 130 ms against 20 ms, beside a 50 ms request overhead both pay.
	if pc.TTFTHit.P50 == nil || pc.TTFTMiss.P50 == nil || *pc.TTFTHit.P50 > 0.7**pc.TTFTMiss.P50 {
		t.Errorf("TTFT p50 of hits %v ms, of misses %v ms: want hits at most 0.7× misses", deref(pc.TTFTHit.P50), deref(pc.TTFTMiss.P50))
	}
	// The server's own counters, where a scrape framed the point, count
	// the same tokens (plus the misses' lookups).
	if tel := pt.Telemetry; tel != nil && tel.Server != nil && tel.Server.HitRate != nil && math.Abs(*tel.Server.HitRate-pc.HitRate) > 0.15 {
		t.Errorf("server hit rate %.3f, client %.3f", *tel.Server.HitRate, pc.HitRate)
	}
	if !strings.Contains(stdout, "Prefix cache") {
		t.Errorf("the report has no prefix-cache table:\n%s", stdout)
	}

	// Random prompts share no block: nothing hits, no count is reported,
	// and the run's outputs carry none of it.
	plain := filepath.Join(t.TempDir(), "plain")
	code, stdout, stderr = run(t, "run", "--concurrency", "2", "--requests", "12", "--prompt-tokens", "512",
		"--output-tokens", "4", "--out", plain)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if readPrefixSummary(t, plain).Points[0].PrefixCache != nil || strings.Contains(stdout, "Prefix cache") {
		t.Errorf("a run of random prompts reports a prefix cache:\n%s", stdout)
	}
	recs, err := os.ReadFile(filepath.Join(plain, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(recs), "cached_tokens") {
		t.Error("records of random prompts carry cached_tokens")
	}
}

func deref(v *float64) any {
	if v == nil {
		return "none"
	}
	return *v
}
