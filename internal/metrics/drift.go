package metrics

import (
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench/internal/stats"
)

// Drift thresholds (docs/METRICS.md, "Slices and drift"). A trend is drift
// when its slope's 95% interval excludes zero and the fitted line moves by
// at least DriftMaterial of its mean across the slices judged: run-to-run
// differences of a few percent are common on one server, so a smaller
// change, however significant over many slices, is not worth a warning.
// Three slices are the fewest that leave the slope's interval a degree of
// freedom.
const (
	DriftMaterial  = 0.05
	minDriftSlices = 3
)

// DriftWarningPrefix starts the warning of a detected drift, which the
// text and Markdown outputs print above the table.
const DriftWarningPrefix = "drift: "

// Drift is a point's drift check (points[].drift).
type Drift struct {
	// Slices is how many steady slices were judged; warm-up and drain
	// slices are not.
	Slices       int  `json:"slices"`
	WarmupSlices int  `json:"warmup_slices"`
	Judged       bool `json:"judged"`
	Detected     bool `json:"detected"`
	// OutputTPS and TTFTP95 are the trends of the slices' aggregate
	// throughput and p95 TTFT against time.
	OutputTPS   *Trend       `json:"output_tps,omitempty"`
	TTFTP95     *Trend       `json:"ttft_ms_p95,omitempty"`
	Coincidence *Coincidence `json:"coincidence,omitempty"`
	// Text is the judgement in a sentence, as the outputs print it.
	Text string `json:"text"`
}

// Trend is one figure's least-squares line over the steady slices, against
// the slices' midpoints in model-time hours.
type Trend struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// SlopePerH is the slope in the figure's unit per hour, with its 95%
	// interval; RelativePerH is the slope over the mean.
	SlopePerH    float64    `json:"slope_per_h"`
	SlopePerHCI  [2]float64 `json:"slope_per_h_ci95"`
	RelativePerH float64    `json:"relative_per_h"`
	// Change is the fitted line's change from the first slice judged to
	// the last, over the mean; SpanS is that stretch in seconds.
	Change      float64 `json:"relative_change"`
	SpanS       float64 `json:"span_s"`
	Significant bool    `json:"significant"`
	Material    bool    `json:"material"`
	Drift       bool    `json:"drift"`
}

// DriftOf judges the steady slices of a point; nil without slices.
func DriftOf(ss []Slice) *Drift {
	if len(ss) == 0 {
		return nil
	}
	d := &Drift{}
	var t, tps, tt, p95 []float64
	for i := range ss {
		s := &ss[i]
		switch s.Phase {
		case PhaseWarmup:
			d.WarmupSlices++
			continue
		case PhaseDrain:
			continue
		}
		d.Slices++
		mid := (s.StartS + s.EndS) / 2 / 3600
		t, tps = append(t, mid), append(tps, s.OutputTPS)
		if s.TTFTP95 != nil {
			tt, p95 = append(tt, mid), append(p95, *s.TTFTP95)
		}
	}
	if d.Slices < minDriftSlices {
		d.Text = fmt.Sprintf("drift not judged: %d steady slices, %d needed (a longer --duration or a shorter --slice)", d.Slices, minDriftSlices)
		return d
	}
	d.Judged = true
	d.OutputTPS, d.TTFTP95 = trend(t, tps), trend(tt, p95)
	d.Detected = d.OutputTPS.isDrift() || d.TTFTP95.isDrift()
	d.Coincidence = coincidence(ss)
	d.Text = d.text()
	return d
}

// trend fits ys against ts (hours); nil when no line can be fitted.
func trend(ts, ys []float64) *Trend {
	f, ok := stats.Regress(ts, ys)
	if !ok || !(f.MeanY != 0) {
		return nil
	}
	span := ts[len(ts)-1] - ts[0]
	tr := &Trend{N: f.N, Mean: f.MeanY, SlopePerH: f.Slope, SlopePerHCI: [2]float64{f.Lo, f.Hi},
		RelativePerH: f.Slope / f.MeanY, Change: f.Slope * span / f.MeanY, SpanS: span * 3600,
		Significant: f.ExcludesZero()}
	tr.Material = math.Abs(tr.Change) >= DriftMaterial
	tr.Drift = tr.Significant && tr.Material
	return tr
}

func (t *Trend) isDrift() bool { return t != nil && t.Drift }

// describe says a trend in words: "fell by 6.1% of its mean over 29 min
// (−12.6%/h, 95% CI −15.0 to −10.2%/h)".
func (t *Trend) describe() string {
	if t.Change == 0 {
		return "did not change over " + spanText(t.SpanS)
	}
	verb := "rose"
	if t.Change < 0 {
		verb = "fell"
	}
	return fmt.Sprintf("%s by %s%% of its mean over %s (%s%%/h, 95%% CI %s to %s%%/h)", verb, pct(math.Abs(t.Change), false),
		spanText(t.SpanS), pct(t.RelativePerH, true), pct(t.SlopePerHCI[0]/t.Mean, true), pct(t.SlopePerHCI[1]/t.Mean, true))
}

// pct writes a fraction as a percentage with the digits that matter: a
// short run's change per hour can be thousands of percent.
func pct(v float64, sign bool) string {
	f := "%.1f"
	if math.Abs(v) >= 1 {
		f = "%.0f"
	}
	if sign {
		f = "%+" + f[1:]
	}
	return fmt.Sprintf(f, 100*v)
}

// verdict says why a trend is or is not drift.
func (t *Trend) verdict() string {
	switch {
	case t.Drift:
		return "drift"
	case t.Significant:
		return fmt.Sprintf("significant but under %.0f%%: no drift", 100*DriftMaterial)
	}
	return "interval includes 0: no drift"
}

func spanText(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.3g s", s)
}

// text is the judgement line: each trend with its verdict, then what the
// telemetry shows beside it.
func (d *Drift) text() string {
	var parts []string
	for _, x := range []struct {
		name string
		t    *Trend
	}{{"aggregate throughput", d.OutputTPS}, {"p95 TTFT", d.TTFTP95}} {
		if x.t == nil {
			parts = append(parts, x.name+" not judged (no line to fit)")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", x.name, x.t.describe(), x.t.verdict()))
	}
	s := fmt.Sprintf("over %d steady slices, %s", d.Slices, strings.Join(parts, "; "))
	if d.Coincidence != nil {
		s += "; " + d.Coincidence.Text
	}
	return s
}

// Warning is the warning of a detected drift, "" when there is none.
func (d *Drift) Warning() string {
	if d == nil || !d.Detected {
		return ""
	}
	var parts []string
	if d.OutputTPS.isDrift() {
		parts = append(parts, "aggregate throughput "+d.OutputTPS.describe())
	}
	if d.TTFTP95.isDrift() {
		parts = append(parts, "p95 TTFT "+d.TTFTP95.describe())
	}
	w := DriftWarningPrefix + strings.Join(parts, "; ") + " across the steady slices"
	if d.Coincidence == nil {
		return w + "; no GPU telemetry to tell whether it coincides with throttling, temperature or power"
	}
	return w + "; " + d.Coincidence.Text
}
