package calib

import (
	"fmt"
	"math"
	"testing"

	"github.com/servebench/servebench/internal/plan"
)

// TestRepeatedLoads: loads a held-out run measured more than once are
// set against their mean, with their spread, in the order they first
// appear; a load measured once is left out. A
// load is the run's: its points' mean lengths may round apart (130 and
// 131 prompt tokens) and it is one load still, while another workload
// cell at the same concurrency is another load.
func TestRepeatedLoads(t *testing.T) {
	pt := func(c, prompt int, ttft, decode, output, predDecode, predOutput float64) MeasuredPoint {
		return MeasuredPoint{Load: fmt.Sprintf("c=%d", c),
			Measured:  plan.Prediction{Concurrency: c, PromptTokens: prompt, OutputTokens: 64, TTFTP50MS: ttft, DecodeTPS: decode, OutputTPS: output},
			Predicted: plan.Prediction{Concurrency: c, PromptTokens: prompt, OutputTokens: 64, TTFTP50MS: 300, DecodeTPS: predDecode, OutputTPS: predOutput}}
	}
	pts := []MeasuredPoint{
		pt(16, 131, 900, 30, 100, 30, 120), pt(2, 131, 300, 30, 90, 44, 90), pt(8, 131, 1, 1, 1, 1, 1),
		pt(2, 130, 300, 40, 90, 44, 90), pt(16, 131, 1100, 30, 100, 30, 120), pt(2, 131, 300, 50, 90, 44, 90),
		{Load: "in=512 out=64 c=2", Measured: plan.Prediction{Concurrency: 2, PromptTokens: 512, OutputTokens: 64, DecodeTPS: 1}}, // another workload
	}
	got := repeatedLoads(pts)
	if len(got) != 2 || got[0].Concurrency != 16 || got[1].Concurrency != 2 {
		t.Fatalf("repeated loads %+v, want c=16 then c=2", got)
	}
	sixteen, two := got[0], got[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if sixteen.Runs != 2 || !near(sixteen.Mean.TTFTP50MS, 1000) || !near(sixteen.Spread.TTFT, math.Sqrt(2)*100/1000) ||
		!near(sixteen.Spread.OutputTPS, 0) || !near(sixteen.Errors.OutputTPS, 0.2) || !near(sixteen.Errors.TTFT, -0.7) {
		t.Errorf("c=16: %+v", sixteen)
	}
	if two.Runs != 3 || two.PromptTokens != 131 || two.Load != "c=2" || !near(two.Mean.DecodeTPS, 40) || !near(two.Spread.DecodeTPS, 0.25) ||
		!near(two.Predicted.DecodeTPS, 44) || !near(two.Errors.DecodeTPS, 0.1) {
		t.Errorf("c=2: %+v", two)
	}
}
