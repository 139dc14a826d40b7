package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

func distOf(xs ...float64) stats.Dist {
	var s stats.Sample
	for _, x := range xs {
		s.Add(x)
	}
	return s.Summary()
}

// TestPrefixCacheSection: the client's hit rate, its TTFT by hit and miss
// and the server's hit rate are printed side by side in text, Markdown
// and the HTML page's tables; a summary with neither has no section.
func TestPrefixCacheSection(t *testing.T) {
	rate := 0.714
	zero := 0.0
	s := &metrics.Summary{Points: []metrics.PointSummary{
		{Load: record.Load{Concurrency: 1}, PrefixCache: &metrics.PrefixCache{HitRate: 0.75, CachedTokens: 768, PromptTokens: 1024,
			Requests: 2, Reported: 1, Hits: 1, TTFTHit: distOf(74), TTFTMiss: distOf(111)},
			Telemetry: &telemetry.Point{Server: &telemetry.ServerPoint{PrefixCacheHitRate: &rate}}},
		// A point without counts: dashes.
		{Load: record.Load{Concurrency: 2}},
	}}
	var text, md bytes.Buffer
	if err := Text(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c=1      75.0%           768/1024            1/2   74   74   74  111  111  111     71.4%",
		"c=2          -                  -              -    -    -    -    -    -    -         -"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if want := "| c=1 | 75.0% | 768/1024 | 1/2 | 74 | 74 | 74 | 111 | 111 | 111 | 71.4% |"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	page := buildPage(&HTMLPage{Runs: []HTMLRun{{Name: "a", Summary: s}}})
	if len(page.Tables) != 1 || page.Tables[0].Rows[0][1] != "75.0%" || page.Tables[0].Columns[1] != "client hit rate" {
		t.Errorf("HTML tables %+v", page.Tables)
	}

	// No counts and a server that saw no hit: no section anywhere.
	none := &metrics.Summary{Points: []metrics.PointSummary{{Load: record.Load{Concurrency: 1},
		Telemetry: &telemetry.Point{Server: &telemetry.ServerPoint{PrefixCacheHitRate: &zero}}}}}
	text.Reset()
	if err := Text(&text, none); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "Prefix cache") || len(buildPage(&HTMLPage{Runs: []HTMLRun{{Name: "a", Summary: none}}}).Tables) != 0 {
		t.Errorf("a section for a run without counts or hits:\n%s", text.String())
	}
}
