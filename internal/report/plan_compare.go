package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/servebench/servebench/internal/plan"
)

// PlanComparison renders a plan set against a measured run (plan
// --compare): per load point, measured beside predicted with their ratio,
// and the limit the measurement suggests.
func PlanComparison(w io.Writer, c *plan.Comparison) error {
	ew := &errWriter{w: w}
	run := ""
	if c.RunModel != "" {
		run = fmt.Sprintf(" (run's model: %s)", c.RunModel)
	}
	ew.printf("Predicted for %s on %s x %d, %s%s; ratio = measured / predicted\n\n", c.Model, c.Device, c.GPUs, c.Engine, run)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  LOAD\tIN/OUT\tTTFT p50\tTTFT p95\tp95 VS BURST\tTPOT\tDECODE TOK/S/REQ\tOUTPUT TOK/S\tPEAK MEMORY\tLIMIT")
	for _, p := range c.Points {
		mem := "-"
		if p.PeakMemory != nil {
			mem = fmt.Sprintf("%s / %s (%s)", plan.FormatBytes(int64(p.PeakMemory.Measured)), plan.FormatBytes(int64(p.PeakMemory.Predicted)), planRatio(p.PeakMemory.Ratio))
		}
		fmt.Fprintf(tw, "  %s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Load, p.PromptTokens, p.OutputTokens,
			secPair(p.TTFTP50), secPair(p.TTFTP95), secPair(p.TTFTBurst), secPair(p.TPOT), numPair(p.DecodeTPS), numPair(p.OutputTPS), mem, p.Limit)
	}
	if ew.err == nil {
		ew.err = tw.Flush()
	}
	ew.printf("\nWhy\n")
	for _, p := range c.Points {
		ew.printf("  - %s: %s: %s (predicted decode bound: %s)\n", p.Load, p.Limit, p.Why, p.Bound)
	}
	for _, warn := range c.Warnings {
		ew.printf("  - %s\n", warn)
	}
	return ew.err
}

func secPair(p plan.Pair) string {
	return fmt.Sprintf("%s / %s (%s)", plan.FormatSeconds(p.Measured), plan.FormatSeconds(p.Predicted), planRatio(p.Ratio))
}

func numPair(p plan.Pair) string {
	return fmt.Sprintf("%.1f / %.1f (%s)", p.Measured, p.Predicted, planRatio(p.Ratio))
}

// planRatio is measured / predicted, "-" when there is none.
func planRatio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}
