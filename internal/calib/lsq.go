package calib

import "math"

// nCoef is the number of linear step-time coefficients: per step, per
// token (above the floor), per sequence, per KV token read.
const nCoef = 4

// normal holds the normal equations of a least-squares fit, XᵀX and Xᵀy
// with yᵀy and the count, for the step-time regressors. Sums of them are
// the equations of the union of their observations, so the bootstrap
// resamples requests by adding their equations with weights.
type normal struct {
	xtx [nCoef][nCoef]float64
	xty [nCoef]float64
	yty float64
	n   float64
}

// regressors are a gap's columns when a step costs at least floor tokens.
func regressors(g gap, floor float64) [nCoef]float64 {
	return [nCoef]float64{1, math.Max(floor, g.tokens), g.seqs, g.kv}
}

func (e *normal) add(g gap, floor float64) {
	x := regressors(g, floor)
	for i := range nCoef {
		for j := range nCoef {
			e.xtx[i][j] += x[i] * x[j]
		}
		e.xty[i] += x[i] * g.ms
	}
	e.yty += g.ms * g.ms
	e.n++
}

// addScaled adds w copies of o.
func (e *normal) addScaled(o *normal, w float64) {
	for i := range nCoef {
		for j := range nCoef {
			e.xtx[i][j] += w * o.xtx[i][j]
		}
		e.xty[i] += w * o.xty[i]
	}
	e.yty += w * o.yty
	e.n += w
}

// solve is non-negative least squares by enumeration: of every subset of
// coefficients whose unconstrained solution is non-negative, the one with
// the least squared error (the others held at zero). With four
// coefficients that is sixteen 4×4 solves, exact and cheap. A coefficient
// the data cannot tell from zero (a column that never varies) stays zero.
func (e *normal) solve() (coef [nCoef]float64, sse float64, ok bool) {
	best := math.Inf(1)
	for mask := 1; mask < 1<<nCoef; mask++ {
		c, good := e.solveSubset(mask)
		if !good {
			continue
		}
		if s := e.sse(c); !ok || s < best {
			best, coef, ok = s, c, true
		}
	}
	return coef, best, ok
}

// solveSubset solves the normal equations restricted to the coefficients
// in mask; good is false when they are singular or a solution is negative.
func (e *normal) solveSubset(mask int) ([nCoef]float64, bool) {
	var idx []int
	for i := range nCoef {
		if mask&(1<<i) != 0 {
			idx = append(idx, i)
		}
	}
	k := len(idx)
	a := make([][]float64, k)
	for r, i := range idx {
		a[r] = make([]float64, k+1)
		for c, j := range idx {
			a[r][c] = e.xtx[i][j]
		}
		a[r][k] = e.xty[i]
	}
	sol, good := gauss(a)
	var coef [nCoef]float64
	for r, i := range idx {
		if !good || sol[r] < 0 {
			return coef, false
		}
		coef[i] = sol[r]
	}
	return coef, true
}

// sse is the squared error of coefficients c: yᵀy − 2cᵀXᵀy + cᵀXᵀXc.
func (e *normal) sse(c [nCoef]float64) float64 {
	s := e.yty
	for i := range nCoef {
		s -= 2 * c[i] * e.xty[i]
		for j := range nCoef {
			s += c[i] * e.xtx[i][j] * c[j]
		}
	}
	return math.Max(s, 0)
}

// gauss solves the augmented system a (k rows, k+1 columns) by Gaussian
// elimination with partial pivoting; false when it is singular relative
// to its own scale.
func gauss(a [][]float64) ([]float64, bool) {
	k := len(a)
	for col := range k {
		p := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		a[col], a[p] = a[p], a[col]
		scale := 0.0
		for c := range k {
			scale = math.Max(scale, math.Abs(a[col][c]))
		}
		if scale == 0 || math.Abs(a[col][col]) < 1e-10*scale {
			return nil, false
		}
		for r := range k {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for c := col; c <= k; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	x := make([]float64, k)
	for r := range k {
		x[r] = a[r][k] / a[r][r]
	}
	return x, true
}
