package calib

import (
	"math"
	"slices"

	"github.com/servebench/servebench/internal/perfmodel"
	"github.com/servebench/servebench/internal/stats"
)

// minTableGaps is the fewest decode-only gaps at one batch size that give
// it a measured step: below it a few steps misread at a prefill's edge
// would set the size's step time.
const minTableGaps = 30

// steadyShare is the smallest share of a point's decode-only gaps at one
// batch size that makes the size one the engine held there. A size seen
// only below that share ran while a slot was being refilled (a stream
// ended, the next request not yet prefilled), and those steps are not that
// size's step: the next request's arrival is handled while they run, so
// they read slow, and the sizes interpolated from them with them
// (docs/PLANNER.md, Measured decode steps).
const steadyShare = 0.2

// TableStep is the measured decode step at one batch size: the median of
// the gaps of steps that ran Seqs decoding sequences and no prompt, and
// the correction it makes to the parametric model there.
type TableStep struct {
	Seqs     int     `json:"sequences"`
	Gaps     int     `json:"gaps"`
	MedianMS float64 `json:"median_ms"`
	// CorrectionMS is the median over requests of their mean measured
	// less fitted step (correctionOf). It is 0
	// where that median lies within two standard errors of 0: there the
	// parametric model describes the steps and the table adds only noise.
	CorrectionMS float64 `json:"correction_ms"`
	SEMS         float64 `json:"se_ms"`
}

// stepTable measures the decode step at every batch size the run held
// (steadyShare) often enough. A step time linear in the batch misses
// engines whose kernels change with it (llama.cpp on a CPU: matrix-vector
// at one sequence, matrix-matrix from two, several times the cost); the
// table holds what the run measured and the model only fills in between
// and beyond.
func stepTable(gaps []gap, reqs []request, m Model) []TableStep {
	var out []TableStep
	by := decodeSteps(gaps)
	held := heldSizes(by, reqs)
	for s, gs := range by {
		if len(gs) < minTableGaps || !held[s] {
			continue
		}
		med, se := correctionOf(gs, m)
		t := TableStep{Seqs: s, Gaps: len(gs), MedianMS: stats.Quantile(stepMS(gs), 0.5), SEMS: se}
		if math.Abs(med) > 2*se {
			t.CorrectionMS = med
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b TableStep) int { return a.Seqs - b.Seqs })
	return out
}

// minRequestSteps is the fewest decode-only gaps at one size that give a
// request its own mean step there, and minRequests the fewest such
// requests that set a size's correction by them.
const (
	minRequestSteps = 8
	minRequests     = 5
)

// correctionOf is the median over requests of each request's mean
// measured less fitted step among gs, ms, and its standard error. A
// request's decode speed is its tokens over the sum of its gaps, so its
// mean gap is what the simulator must reproduce, and the median over
// requests is what a single stall (one request's) or the engine's wander
// (symmetric in speed, which the simulator replays) leaves in place. The
// median gap is not: a tail of slow steps moves every request's mean and
// not the median of the gaps, and decode would be predicted fast
// (docs/PLANNER.md, Measured decode steps). Too few requests with enough
// steps at the size: the median of the gaps.
func correctionOf(gs []gap, m Model) (med, se float64) {
	byReq := map[int][]float64{}
	all := make([]float64, len(gs))
	for i, g := range gs {
		all[i] = g.ms - m.StepMSFor(g.seqs, g.tokens, g.kv)
		byReq[g.req] = append(byReq[g.req], all[i])
	}
	var means []float64
	for _, rs := range byReq {
		if len(rs) >= minRequestSteps {
			means = append(means, stats.Mean(rs))
		}
	}
	xs := all
	if len(means) >= minRequests {
		xs = means
	}
	slices.Sort(xs)
	med = stats.Quantile(xs, 0.5)
	return med, medianSE(xs, med)
}

// heldSizes are the batch sizes of by (decodeSteps) that made up at least
// steadyShare of some point's decode-only gaps.
func heldSizes(by map[int][]gap, reqs []request) map[int]bool {
	type key struct{ point, seqs int }
	n, total := map[key]int{}, map[int]int{}
	for s, gs := range by {
		for _, g := range gs {
			p := reqs[g.req].point
			n[key{p, s}]++
			total[p]++
		}
	}
	held := map[int]bool{}
	for k, c := range n {
		if float64(c) >= steadyShare*float64(total[k.point]) {
			held[k.seqs] = true
		}
	}
	return held
}

// decodeSteps are the decode-only gaps by the number of sequences in
// their step: what the step table measures, and what a held-out run is
// compared with it by (StepChanges).
func decodeSteps(gaps []gap) map[int][]gap {
	by := map[int][]gap{}
	for _, g := range gaps {
		if decodeOnly(g) {
			by[int(g.seqs)] = append(by[int(g.seqs)], g)
		}
	}
	return by
}

// stepMS are the gaps' step times, sorted.
func stepMS(gs []gap) []float64 {
	ms := make([]float64, len(gs))
	for i, g := range gs {
		ms[i] = g.ms
	}
	slices.Sort(ms)
	return ms
}

// medianSE is the standard error of the median med of xs under normal
// values of xs's robust spread: 1.2533 σ/√n, σ from the median absolute
// deviation.
func medianSE(xs []float64, med float64) float64 {
	abs := make([]float64, len(xs))
	for i, x := range xs {
		abs[i] = math.Abs(x - med)
	}
	slices.Sort(abs)
	return 1.2533 * 1.4826 * stats.Quantile(abs, 0.5) / math.Sqrt(float64(len(xs)))
}

// decodeOnly says the step ran decodes alone: a prompt in it makes it a
// prefill step, which the parametric model costs by its tokens.
func decodeOnly(g gap) bool {
	if len(g.parts) == 0 {
		return false
	}
	for _, p := range g.parts {
		if !p.decode {
			return false
		}
	}
	return true
}

// Tabled is the fitted model with the measured decode steps: a decode-only
// step of a batch size the table holds costs the model's step plus that
// size's correction, and one between two sizes it holds the correction
// interpolated between theirs: the model's shape is what the table says is
// wrong, so between two measured sizes the measurements bound the step
// better than the model does (on one CPU thread llama.cpp's step at two
// sequences lies between those at one and three; the fitted line, pulled
// to three and four, put it above both). Beyond the measured sizes the
// model's step stands: one sequence's correction (matrix-vector kernels)
// says nothing of eight. Steps with a prompt are the model's.
type Tabled struct {
	perfmodel.Fitted
	Table []TableStep
}

// StepTime implements perfmodel.StepTimer.
func (t Tabled) StepTime(b perfmodel.Batch) float64 {
	base := t.Fitted.StepTime(b)
	if b.PrefillTokens > 0 || b.Seqs == 0 || len(t.Table) == 0 {
		return base
	}
	return math.Max(0, base+correction(t.Table, float64(b.Seqs))/1e3)
}

// correction is the table's correction at s sequences, ms: a measured
// size's own, interpolated between the nearest measured sizes on either
// side, 0 outside them.
func correction(tab []TableStep, s float64) float64 {
	var lo, hi *TableStep
	for i := range tab {
		t := &tab[i]
		switch n := float64(t.Seqs); {
		case n == s:
			return t.CorrectionMS
		case n < s && (lo == nil || t.Seqs > lo.Seqs):
			lo = t
		case n > s && (hi == nil || t.Seqs < hi.Seqs):
			hi = t
		}
	}
	if lo == nil || hi == nil {
		return 0
	}
	f := (s - float64(lo.Seqs)) / float64(hi.Seqs-lo.Seqs)
	return lo.CorrectionMS + f*(hi.CorrectionMS-lo.CorrectionMS)
}
