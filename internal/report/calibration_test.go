package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/plan"
)

// TestCalibrationRepeats: a held-out load measured more than once is shown
// as mean ±spread / predicted, and an error inside two standard errors of
// the mean is marked as the server's own spread.
func TestCalibrationRepeats(t *testing.T) {
	rs := []calib.RepeatedLoad{
		{Concurrency: 16, Runs: 2, Mean: plan.Prediction{TTFTP50MS: 1000, DecodeTPS: 30, OutputTPS: 100},
			Spread:    plan.Ratios{TTFT: 0.1414},
			Predicted: plan.Prediction{TTFTP50MS: 300, DecodeTPS: 30, OutputTPS: 120}, Errors: plan.Ratios{TTFT: -0.7, OutputTPS: 0.2}},
		{Concurrency: 2, Runs: 3, Mean: plan.Prediction{TTFTP50MS: 300, DecodeTPS: 40, OutputTPS: 90},
			Spread:    plan.Ratios{DecodeTPS: 0.25},
			Predicted: plan.Prediction{TTFTP50MS: 300, DecodeTPS: 44, OutputTPS: 90}, Errors: plan.Ratios{DecodeTPS: 0.1}},
	}
	var b strings.Builder
	writeCalibRepeats(&b, rs)
	text := b.String()
	// +10% against a spread of 25% over 3 runs (2 se = 28.9%) is the
	// server's; +20% against no spread is not.
	for _, want := range []string{"40.0 ±25.0% / 44.0  +10.0%~", "100.0 ±0.0% / 120.0  +20.0%\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
