package calib

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/servebench/servebench/internal/perfmodel"
)

// Shared is the fit read into the shared roofline model of a known model
// and device (--config): the compute and bandwidth efficiencies, the step
// overhead and the per-request overhead, so that
//
//	step = passes · (step_overhead + max(compute / compute_efficiency, memory / bandwidth_efficiency) + interconnect)
//
// with compute, memory and interconnect the model's roofs at full
// efficiency for the step's sequences (passes is the batch when the
// engine runs one pass per sequence, else 1).
type Shared struct {
	Model  string  `json:"model"`
	Device string  `json:"device"`
	Params []Param `json:"parameters"`
	RMSMS  float64 `json:"rms_ms"`
	model  perfmodel.Model
}

// Timer is the shared model with the fitted values, as the simulator runs it.
func (s *Shared) Timer() perfmodel.Model { return s.model }

// sharedGap is a gap's roofs under the peak model: per pass, and the
// number of passes.
type sharedGap struct {
	req                    int
	ms                     float64
	passes                 float64
	compute, memory, fixed float64 // ms per pass; fixed is the interconnect
}

// Efficiency grid: from 0.005 to 1, geometric, then a finer grid around
// the best point. An efficiency cannot pass 1: a fit at 1 says the
// device's peak figures are too low for what the run measured.
const (
	effGrid      = 32
	effLow       = 0.005
	effHigh      = 1.0
	refineLen    = 9
	refineLevels = 3
)

// sharedBootstrapShare is the share of Options.Bootstrap the shared fit
// resamples: each refit searches a grid, a hundred times the agnostic
// fit's work.
const sharedBootstrapShare = 4

// FitShared fits the shared model's efficiencies and overheads to the
// run's gaps and lone requests, given the model at full efficiency and
// no overhead (plan.PeakModel).
func (f *Fit) FitShared(peak perfmodel.Model, o Options) (*Shared, error) {
	gs := make([]sharedGap, 0, len(f.gaps))
	for _, g := range f.gaps {
		gs = append(gs, sharedOf(peak, g))
	}
	w := make([]float64, len(f.reqs))
	for i := range w {
		w[i] = 1
	}
	best, ok := fitShared(peak, gs, f.reqs, f.lone, w)
	if !ok {
		return nil, fmt.Errorf("%w: no efficiency fits the gaps", ErrTooFew)
	}
	iters := o.Bootstrap
	if iters <= 0 {
		iters = DefaultBootstrap
	}
	iters = max(iters/sharedBootstrapShare, 2)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5ead))
	var draws [][4]float64
	for range iters {
		clear(w)
		for range f.reqs {
			w[rng.IntN(len(f.reqs))]++
		}
		if b, ok := fitShared(peak, gs, f.reqs, f.lone, w); ok {
			draws = append(draws, b.values())
		}
	}
	return best.shared(peak, draws, gs), nil
}

func sharedOf(peak perfmodel.Model, g gap) sharedGap {
	var b perfmodel.Batch
	for _, p := range g.parts {
		b.Add(peak.Chunk(p.cached, p.q, p.decode))
	}
	passes := 1.0
	if peak.PassPerSeq && b.Seqs > 1 {
		passes = float64(b.Seqs)
		b = b.Scale(1 / passes)
	}
	t := peak.StepTerms(b)
	return sharedGap{req: g.req, ms: g.ms, passes: passes, compute: t.Compute * 1e3, memory: t.Memory * 1e3, fixed: t.Comm * 1e3}
}

// sharedFit is one candidate: 1/efficiencies, step overhead, request overhead (ms).
type sharedFit struct {
	u, v, step, request float64
	sse                 float64
}

func (s sharedFit) values() [4]float64 { return [4]float64{1 / s.u, 1 / s.v, s.step, s.request} }

// fitShared searches the efficiencies on a grid and refines around the
// best; the step overhead is least squares given them, the request
// overhead the lone requests' median excess. As with the agnostic fit,
// candidates that leave lone TTFTs a negative overhead lose to any that
// does not.
func fitShared(peak perfmodel.Model, gs []sharedGap, reqs []request, lone []int, w []float64) (sharedFit, bool) {
	grid := make([]float64, effGrid) // 1/efficiency
	for i := range grid {
		grid[i] = math.Pow(effHigh, -1) * math.Pow(effHigh/effLow, float64(i)/(effGrid-1))
	}
	best, found, feasible := sharedFit{}, false, false
	try := func(u, v float64) {
		c, ok := evalShared(peak, gs, reqs, lone, w, u, v)
		if ok && (!found || (c.feasible && !feasible) || (c.feasible == feasible && c.fit.sse < best.sse)) {
			best, found, feasible = c.fit, true, c.feasible
		}
	}
	for _, u := range grid {
		for _, v := range grid {
			try(u, v)
		}
	}
	// Three refinements, each a 9×9 grid spanning the previous step around
	// the best point: the last resolves an efficiency to about 0.3%.
	step := math.Pow(effHigh/effLow, 1/float64(effGrid-1))
	for range refineLevels {
		u0, v0 := best.u, best.v
		f := func(k int) float64 { return math.Pow(step, float64(k-refineLen/2)/float64(refineLen/2)) }
		for i := range refineLen {
			for j := range refineLen {
				if u, v := u0*f(i), v0*f(j); u >= 1/effHigh && v >= 1/effHigh {
					try(u, v)
				}
			}
		}
		step = math.Pow(step, 2/float64(refineLen-1))
	}
	return best, found
}

type sharedCand struct {
	fit      sharedFit
	feasible bool
}

func evalShared(peak perfmodel.Model, gs []sharedGap, reqs []request, lone []int, w []float64, u, v float64) (sharedCand, bool) {
	var num, den float64
	for _, g := range gs {
		if wt := w[g.req]; wt > 0 {
			x := math.Max(u*g.compute, v*g.memory) + g.fixed
			num += wt * g.passes * (g.ms - g.passes*x)
			den += wt * g.passes * g.passes
		}
	}
	if den == 0 {
		return sharedCand{}, false
	}
	c := sharedFit{u: u, v: v, step: math.Max(0, num/den)}
	for _, g := range gs {
		if wt := w[g.req]; wt > 0 {
			d := g.ms - g.passes*(c.step+math.Max(u*g.compute, v*g.memory)+g.fixed)
			c.sse += wt * d * d
		}
	}
	lonePrefill := func(r request) float64 {
		t := peak.StepTerms(peak.Chunk(0, int64(r.prompt), false))
		return c.step + math.Max(u*t.Compute, v*t.Memory)*1e3 + t.Comm*1e3
	}
	ex, any := weightedMedian(reqs, lone, w, lonePrefill)
	c.request = math.Max(0, ex)
	return sharedCand{fit: c, feasible: !any || ex >= 0}, true
}

// weightedMedian is the weighted median over the lone requests of TTFT
// less step(r); any is false without lone requests.
func weightedMedian(reqs []request, lone []int, w []float64, step func(request) float64) (float64, bool) {
	type ex struct{ x, w float64 }
	var xs []ex
	var total float64
	for _, i := range lone {
		if w[i] > 0 {
			xs = append(xs, ex{reqs[i].ttft() - step(reqs[i]), w[i]})
			total += w[i]
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	slices.SortFunc(xs, func(a, b ex) int { return cmp.Compare(a.x, b.x) })
	var cum float64
	for _, e := range xs {
		if cum += e.w; cum >= total/2 {
			return e.x, true
		}
	}
	return xs[len(xs)-1].x, true
}

// shared reports the fit with its bootstrap intervals and residual RMS,
// and the model the simulator runs.
func (s sharedFit) shared(peak perfmodel.Model, draws [][4]float64, gs []sharedGap) *Shared {
	names := []string{"compute_efficiency", "bandwidth_efficiency", "step_overhead_ms", "request_overhead_ms"}
	units := []string{"of peak FLOP/s", "of peak bandwidth", "ms", "ms"}
	out := &Shared{}
	for k, v := range s.values() {
		p := Param{Name: names[k], Value: v, Low: v, High: v, Unit: units[k]}
		var d []float64
		for _, dr := range draws {
			d = append(d, dr[k])
		}
		p.interval(d)
		out.Params = append(out.Params, p)
	}
	var ss float64
	for _, g := range gs {
		d := g.ms - g.passes*(s.step+math.Max(s.u*g.compute, s.v*g.memory)+g.fixed)
		ss += d * d
	}
	out.RMSMS = math.Sqrt(ss / float64(max(len(gs), 1)))
	m := peak
	m.Rates.FLOPS, m.Rates.Bandwidth = peak.Rates.FLOPS/s.u, peak.Rates.Bandwidth/s.v
	m.Overheads = perfmodel.Overheads{Step: s.step / 1e3, Request: s.request / 1e3}
	out.model = m
	return out
}
