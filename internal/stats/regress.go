package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fit is an ordinary least-squares line y = Intercept + Slope·x with the
// 95% confidence interval of its slope.
//
// Definition (docs/METRICS.md, Drift): with x̄, ȳ the means of the n
// points, Sxx = Σ(x−x̄)², Sxy = Σ(x−x̄)(y−ȳ), the slope is b = Sxy/Sxx and
// the intercept a = ȳ − b·x̄. The residual variance is
// s² = Σ(y − a − b·x)² / (n−2) and the slope's standard error
// SE = √(s²/Sxx). The interval is b ± t·SE, t being the 0.975 quantile of
// Student's t distribution with n−2 degrees of freedom: under independent,
// normally distributed residuals it covers the true slope 95% of the time.
type Fit struct {
	N         int
	Slope     float64
	Intercept float64
	SE        float64 // standard error of the slope
	Lo, Hi    float64 // 95% confidence interval of the slope
	MeanX     float64
	MeanY     float64
}

// ConfidenceLevel is the coverage of every interval Regress and
// Correlate give.
const ConfidenceLevel = 0.95

// Regress fits ys against xs by least squares. ok is false for fewer than
// three points (no residual degree of freedom, so no interval) or no
// spread in xs.
func Regress(xs, ys []float64) (f Fit, ok bool) {
	n := min(len(xs), len(ys))
	if n < 3 {
		return Fit{N: n}, false
	}
	f = Fit{N: n, MeanX: Mean(xs[:n]), MeanY: Mean(ys[:n])}
	var sxx, sxy float64
	for i := range n {
		dx := xs[i] - f.MeanX
		sxx += dx * dx
		sxy += dx * (ys[i] - f.MeanY)
	}
	if !(sxx > 0) {
		return f, false
	}
	f.Slope = sxy / sxx
	f.Intercept = f.MeanY - f.Slope*f.MeanX
	var ssr float64
	for i := range n {
		r := ys[i] - f.Intercept - f.Slope*xs[i]
		ssr += r * r
	}
	f.SE = math.Sqrt(ssr / float64(n-2) / sxx)
	t := TQuantile(0.5+ConfidenceLevel/2, float64(n-2))
	f.Lo, f.Hi = f.Slope-t*f.SE, f.Slope+t*f.SE
	return f, true
}

// ExcludesZero reports whether the slope's interval lies wholly on one
// side of zero: the data show a trend, not noise around a flat line.
func (f Fit) ExcludesZero() bool { return f.Lo > 0 || f.Hi < 0 }

// TQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom (gonum's, through the inverse regularised incomplete beta
// function).
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Correlation is Pearson's r between two series with a two-sided test of
// r ≠ 0 at ConfidenceLevel.
type Correlation struct {
	N int
	R float64
	// Significant: |t| = |r|·√((n−2)/(1−r²)) exceeds the t quantile with
	// n−2 degrees of freedom, the same test as a regression slope's
	// interval excluding zero.
	Significant bool
}

// Correlate computes Pearson's r of xs and ys. ok is false for fewer than
// three pairs or a series without spread (r is undefined: a constant
// temperature says nothing about throughput).
func Correlate(xs, ys []float64) (c Correlation, ok bool) {
	n := min(len(xs), len(ys))
	c.N = n
	if n < 3 {
		return c, false
	}
	mx, my := Mean(xs[:n]), Mean(ys[:n])
	var sxx, syy, sxy float64
	for i := range n {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	if !(sxx > 0) || !(syy > 0) {
		return c, false
	}
	c.R = max(-1, min(1, sxy/math.Sqrt(sxx*syy)))
	if math.Abs(c.R) == 1 {
		c.Significant = true
		return c, true
	}
	t := math.Abs(c.R) * math.Sqrt(float64(n-2)/(1-c.R*c.R))
	c.Significant = t > TQuantile(0.5+ConfidenceLevel/2, float64(n-2))
	return c, true
}
