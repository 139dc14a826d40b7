package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/servebench/servebench/internal/compare"
)

// ComparisonJSON writes a comparison of two runs as compare --json prints
// it (docs/OUTPUT.md).
func ComparisonJSON(w io.Writer, r *compare.Result) error {
	return writeJSON(w, r, false)
}

// Comparison prints a comparison of two runs for people: the runs, every
// difference from a controlled comparison (loudly), what could not be
// matched, one table per common load point, and the regression gates.
func Comparison(w io.Writer, r *compare.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Comparing B with A: change = B − A, with its %g%% interval (%d bootstrap resamples of runs, then of requests in them;\n"+
		"a side of one run adds the noise between its own time slices)\n", 100*r.Confidence, r.Iterations)
	for _, x := range []struct {
		side string
		ri   compare.RunInfo
	}{{"A", r.A}, {"B", r.B}} {
		fmt.Fprintf(&b, "  %s: %s  (%s)\n", x.side, x.ri.Name, runLine(x.ri))
		for _, w := range x.ri.Warnings {
			fmt.Fprintf(&b, "     ! %s\n", w)
		}
	}
	if r.SameRun != "" {
		fmt.Fprintf(&b, "\nA and B are the same run (%s): there is no change to measure.\n", r.SameRun)
		_, err := io.WriteString(w, b.String())
		return err
	}
	writeDifferences(&b, r)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n! %s\n", n)
	}
	for _, p := range r.Points {
		writePoint(&b, p)
	}
	writeGates(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func runLine(ri compare.RunInfo) string {
	parts := []string{}
	if ri.Model != "" {
		parts = append(parts, ri.Model)
	}
	if t, err := time.Parse(time.RFC3339Nano, ri.Started); err == nil {
		parts = append(parts, "started "+t.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if ri.TimeScale != 1 {
		parts = append(parts, fmt.Sprintf("time scale %g, figures in model time", ri.TimeScale))
	}
	parts = append(parts, fmt.Sprintf("%d measured requests", ri.Requests))
	if ri.PointWarnings > 0 {
		parts = append(parts, fmt.Sprintf("%d load point warning(s): see servebench report", ri.PointWarnings))
	}
	return strings.Join(parts, ", ")
}

func writeDifferences(b *strings.Builder, r *compare.Result) {
	if r.Controlled {
		b.WriteString("\nControlled comparison: model, quantization, runtime and version, context length, sampling, workload, load policy and time scale match")
		if len(r.Differences) > 0 {
			b.WriteString(" where both runs report them")
		}
		b.WriteString(".\n")
	} else {
		b.WriteString("\nNOT A CONTROLLED COMPARISON (--strict refuses it):\n")
	}
	for _, d := range r.Differences {
		if d.Known {
			fmt.Fprintf(b, "  ! %s\n", d.Text())
		}
	}
	for _, d := range r.Differences {
		if !d.Known {
			fmt.Fprintf(b, "  ? %s\n", d.Text())
		}
	}
}

func writePoint(b *strings.Builder, p compare.Point) {
	fmt.Fprintf(b, "\n%s   %s\n", p.Load.Label(), sides(p))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  metric\tA\tB\tchange\t\tinterval\tverdict")
	for _, c := range p.Changes {
		st := c.Statistic()
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Metric, value(st.Format, c.A), value(st.Format, c.B),
			signed(st.Format, c.Diff), relText(c.Rel), ciText(st.Format, c), verdictText(c))
	}
	tw.Flush()
	for _, c := range p.Changes {
		if c.Why != "" && !c.Thin {
			fmt.Fprintf(b, "  %s: %s\n", c.Metric, c.Why)
		}
	}
	if n := noiseNote(p); n != "" {
		fmt.Fprintf(b, "  noise: %s\n", n)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(b, "  ! %s\n", n)
	}
	if p.Inconclusive != "" {
		fmt.Fprintf(b, "  INCONCLUSIVE: %s\n", p.Inconclusive)
	}
}

func requests(n, runs int) string {
	if runs > 1 {
		return fmt.Sprintf("%d requests in %d runs", n, runs)
	}
	return fmt.Sprintf("%d requests", n)
}

// sides says how many runs each side rests on, for a point's title.
func sides(p compare.Point) string {
	a, b := requests(p.RequestsA, p.RunsA), requests(p.RequestsB, p.RunsB)
	if p.RunsA < 2 && p.RunsB < 2 {
		return fmt.Sprintf("A: %s, B: %s (one run each)", a, b)
	}
	return fmt.Sprintf("A: %s, B: %s", a, b)
}

// noiseNote says where a point's intervals took their between-run noise
// from: the runs, or each run's own time slices.
func noiseNote(p compare.Point) string {
	slices := map[[2]int]bool{}
	for _, c := range p.Changes {
		if c.Noise != nil && c.Noise.Source == compare.FromSlices {
			slices[[2]int{c.Noise.SlicesA, c.Noise.SlicesB}] = true
		}
	}
	switch {
	case p.RunsA > 1 && p.RunsB > 1:
		return fmt.Sprintf("from the spread between runs (%d in A, %d in B)", p.RunsA, p.RunsB)
	case len(slices) == 0:
		return ""
	}
	var ks []string
	for k := range slices {
		ks = append(ks, sliceCount(k))
	}
	sort.Strings(ks)
	return fmt.Sprintf("%s: each interval is widened to t·SE of the spread between each run's own time slices (%s), so a change within a run's own variation is not called", compare.OneRun(p.RunsA, p.RunsB), strings.Join(ks, "; "))
}

func sliceCount(k [2]int) string {
	switch {
	case k[0] == 0:
		return fmt.Sprintf("B: %d", k[1])
	case k[1] == 0:
		return fmt.Sprintf("A: %d", k[0])
	case k[0] == k[1]:
		return fmt.Sprintf("%d each", k[0])
	}
	return fmt.Sprintf("%d in A, %d in B", k[0], k[1])
}

func value(format func(float64) string, v *float64) string {
	if v == nil {
		return "-"
	}
	return format(*v)
}

// signed writes a difference with its sign: "+5.2ms", "−3.1 tok/s".
func signed(format func(float64) string, v *float64) string {
	if v == nil {
		return "-"
	}
	switch {
	case *v > 0:
		return "+" + format(*v)
	case *v < 0:
		return "−" + format(-*v)
	}
	return "0"
}

func relText(rel *float64) string {
	if rel == nil {
		return ""
	}
	if *rel == 0 {
		return "0%"
	}
	return signed(func(v float64) string { return strconv.FormatFloat(100*v, 'g', 3, 64) + "%" }, rel)
}

func ciText(format func(float64) string, c compare.Change) string {
	if c.CI == nil {
		return "-"
	}
	return "[" + signed(format, &c.CI.Low) + ", " + signed(format, &c.CI.High) + "]"
}

func verdictText(c compare.Change) string {
	v := c.Verdict
	switch v {
	case compare.Worse:
		v = "WORSE"
	case compare.Noise:
		v = "noise"
	case compare.Unknown:
		if c.Unrepeated() {
			v = "unknown (" + compare.NoRepeat + "; repeat to know)"
		}
	}
	if c.Thin {
		v += " (thin)"
	}
	return v
}

func writeGates(b *strings.Builder, r *compare.Result) {
	if len(r.Gates) == 0 {
		return
	}
	b.WriteString("\nRegression gates (--fail-on-regression):\n")
	for _, g := range r.Gates {
		fmt.Fprintf(b, "  %-4s  %s at %s: %s, %s\n", gateResult(g), g.Gate, g.Load.Label(), worseText(g), g.Reason)
	}
}

// gateResult is a gate's outcome in a word: ok, FAIL or INCONCLUSIVE.
func gateResult(g compare.GateResult) string {
	switch {
	case g.Inconclusive:
		return "INCONCLUSIVE"
	case g.Failed:
		return "FAIL"
	}
	return "ok"
}

// worseText is a gate's worsening as a reader says it: "23.4% worse",
// "12.3ms better".
func worseText(g compare.GateResult) string {
	if g.Worse == nil {
		return "no change measured"
	}
	w := *g.Worse
	if w == 0 {
		return "no change"
	}
	if w == math.MaxFloat64 {
		return "worse than a zero"
	}
	var amount string
	switch {
	case g.Relative || g.Unit == "fraction":
		amount = fmt.Sprintf("%.3g%%", 100*math.Abs(w))
		if !g.Relative {
			amount += " (points)"
		}
	case g.Unit == "ms":
		amount = fmt.Sprintf("%.3gms", math.Abs(w))
	default:
		amount = fmt.Sprintf("%.3g %s", math.Abs(w), g.Unit)
	}
	if w <= 0 {
		return amount + " better"
	}
	return amount + " worse"
}
