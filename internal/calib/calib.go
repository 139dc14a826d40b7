// Package calib fits a performance model to a measured run, so that the
// simulator can answer what-if questions for that deployment: another
// concurrency, other prompt or output lengths, more slots. It owns the
// estimator (docs/PLANNER.md, Calibration): records in, a fitted
// Model with bootstrap intervals and residuals out, and predictions
// that go through the simulator's scheduler. It returns values; rendering
// them is report's.
package calib

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Schema names the calibration's JSON output.
const Schema = "servebench.calibration/v1"

// Defaults of the estimator.
const (
	// DefaultBootstrap resamples: enough for a 95% percentile interval to
	// settle to a few percent of its width.
	DefaultBootstrap = 400
	// Level is the confidence of every interval.
	Level = 0.95
	// minGaps is the fewest inter-token gaps a fit accepts: below it the
	// four coefficients are not determined.
	minGaps = 20
)

// Param is one fitted value with its bootstrap interval and standard error.
type Param struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	SE    float64 `json:"se"`
	Unit  string  `json:"unit"`
	// Unstable: the estimate lay outside its resamples' central interval,
	// which is then widened to reach it. The run does not pin the value
	// down; the fit warns of it.
	Unstable bool `json:"unstable,omitempty"`
}

// interval sets p's percentile interval and standard error from its
// bootstrap draws d (sorted here). An interval that leaves out the
// estimate it is about would be shown beside it and read as a
// contradiction; it is widened to include it, and p marked unstable.
func (p *Param) interval(d []float64) {
	if len(d) < 2 {
		return // without resamples the interval is the value itself
	}
	slices.Sort(d)
	p.Low, p.High, p.SE = stats.Quantile(d, (1-Level)/2), stats.Quantile(d, (1+Level)/2), stats.StdDev(d)
	if p.Value < p.Low || p.Value > p.High {
		p.Low, p.High, p.Unstable = math.Min(p.Low, p.Value), math.Max(p.High, p.Value), true
	}
}

// unstable names the parameters whose estimate lay outside their
// bootstrap interval.
func unstable(ps []Param) []string {
	var names []string
	for _, p := range ps {
		if p.Unstable {
			names = append(names, p.Name)
		}
	}
	return names
}

// Fit is what a calibration found.
type Fit struct {
	Model  Model   `json:"model"`
	Params []Param `json:"parameters"`
	// Slots is how many sequences the server runs at once; 0 when the run
	// did not bound it (SlotsSource says where it came from).
	Slots       int    `json:"slots"`
	SlotsSource string `json:"slots_source"`
	// OverheadIn is where a request spends its overhead, before or after
	// it takes a slot (sim.EngineConfig.OverheadIn), from the server's
	// description of itself.
	OverheadIn string `json:"overhead_in"`
	Requests   int    `json:"requests"`
	Gaps       int    `json:"gaps"`
	// LoneRequests were sent with nothing else in flight; their TTFT fixes
	// the per-request overhead.
	LoneRequests int       `json:"lone_requests"`
	Residuals    Residuals `json:"residuals"`
	// Table is the measured decode step by batch size (stepTable); the
	// predictions use it where it corrects the model.
	Table []TableStep `json:"step_table,omitempty"`
	// Wander is the server's slow change of speed within the run; nil when
	// the run shows none (estimateWander).
	Wander *Wander `json:"wander,omitempty"`
	// Shared is the fit read into the shared roofline model of a known
	// model and device (FitShared); predictions then run on it.
	Shared   *Shared  `json:"shared,omitempty"`
	Warnings []string `json:"warnings,omitempty"`

	// What the fit was made from, for FitShared.
	reqs []request
	gaps []gap
	lone []int
}

// Residuals describe how well the step model fits the gaps it was fitted
// to, in ms per token, overall and by the number of sequences in the step.
type Residuals struct {
	RMSMS  float64 `json:"rms_ms"`
	MeanMS float64 `json:"mean_gap_ms"`
	// SpreadMS is 1.4826 × the median absolute residual: the residuals'
	// standard deviation were they normal, unmoved by a few host stalls.
	SpreadMS float64        `json:"spread_ms"`
	BySeqs   []SeqsResidual `json:"by_sequences"`
	TTFTRMS  float64        `json:"lone_ttft_rms_ms"`
}

// SeqsResidual compares the mean measured gap with the mean fitted step
// for the steps that ran seqs sequences.
type SeqsResidual struct {
	Seqs     int     `json:"sequences"`
	Gaps     int     `json:"gaps"`
	Measured float64 `json:"measured_ms"`
	Fitted   float64 `json:"fitted_ms"`
}

// Options tune a fit.
type Options struct {
	Bootstrap int    // resamples; 0 means DefaultBootstrap
	Seed      uint64 // of the bootstrap
	// Slots, when positive, is the slot count as the user knows it.
	Slots int
}

// ErrTooFew says the run holds too little to fit.
var ErrTooFew = errors.New("too few streamed tokens to fit")

// Records fits the model to a run's records, in model time (see
// record.Record.ModelTime). server is run.json's target.server, read for
// the slot count a server states about itself.
func Records(recs []*record.Record, server map[record.ServerKey]string, o Options) (*Fit, error) {
	var reqs []request
	for _, r := range recs {
		if q, ok := requestOf(r); ok {
			reqs = append(reqs, q)
		}
	}
	return fitRequests(reqs, server, o)
}

// fitRequests fits the model to the requests of a run.
func fitRequests(reqs []request, server map[record.ServerKey]string, o Options) (*Fit, error) {
	gaps := observe(reqs)
	if len(gaps) < minGaps {
		return nil, fmt.Errorf("%w: %d inter-token gaps in %d streamed requests, need %d (longer answers or more requests)", ErrTooFew, len(gaps), measured(reqs), minGaps)
	}
	lone := loneRequests(reqs)
	f := &Fit{Requests: measured(reqs), Gaps: len(gaps), LoneRequests: len(lone)}
	fl := floors(gaps)
	eqs := perRequest(reqs, gaps, fl)
	w := make([]float64, len(reqs))
	for i := range w {
		w[i] = 1
	}
	m, err := fitWeighted(eqs, fl, reqs, lone, w)
	if err != nil {
		return nil, err
	}
	f.Model = m
	f.Params = bootstrap(eqs, fl, reqs, lone, m, o)
	f.reqs, f.gaps, f.lone = reqs, gaps, lone
	f.Slots, f.SlotsSource = slots(reqs, server, o.Slots)
	f.OverheadIn = overheadIn(server)
	f.Residuals = residuals(gaps, reqs, lone, m)
	f.Table = stepTable(gaps, reqs, m)
	f.Wander = estimateWander(gaps, m)
	f.Warnings = warnings(f, reqs)
	return f, nil
}

// measured counts the requests that are not warm-ups.
func measured(reqs []request) int {
	n := 0
	for _, r := range reqs {
		if !r.warmup {
			n++
		}
	}
	return n
}

// floors are the token floors (Fitted.MinTokens) the fit profiles over:
// none, then 48 steps in geometric progression up to the largest step.
func floors(gaps []gap) []float64 {
	top := 1.0
	for _, g := range gaps {
		top = math.Max(top, g.tokens)
	}
	out := []float64{0}
	for k := range 48 {
		out = append(out, math.Pow(top, float64(k)/47))
	}
	return out
}

// perRequest sums each request's gaps into its own normal equations, for
// every floor: eqs[k][i] is request i's under floor k.
func perRequest(reqs []request, gaps []gap, fl []float64) [][]normal {
	eqs := make([][]normal, len(fl))
	for k, f := range fl {
		eqs[k] = make([]normal, len(reqs))
		for _, g := range gaps {
			eqs[k][g.req].add(g, f)
		}
	}
	return eqs
}

// fitWeighted fits the model to the requests' equations, each counted w
// times: for each floor the step coefficients by least squares, then a
// floor by the rule in choose, then the per-request overhead.
func fitWeighted(eqs [][]normal, fl []float64, reqs []request, lone []int, w []float64) (Model, error) {
	var cands []candidate
	for k := range fl {
		var sum normal
		for i := range eqs[k] {
			if w[i] > 0 {
				sum.addScaled(&eqs[k][i], w[i])
			}
		}
		c, sse, ok := sum.solve()
		if !ok {
			continue
		}
		m := Model{StepMS: c[0], PerTokenMS: c[1], MinTokens: fl[k], PerSeqMS: c[2], PerKVTokenMS: c[3]}
		excess, any := medianExcess(m, reqs, lone, w)
		cands = append(cands, candidate{m: m, sse: sse, n: sum.n, excess: excess, feasible: !any || excess >= 0})
	}
	if len(cands) == 0 {
		return Model{}, fmt.Errorf("%w: the gaps do not determine a step time", ErrTooFew)
	}
	best := choose(cands)
	m := best.m
	m.RequestOverheadMS = math.Max(0, best.excess)
	if m.PerTokenMS == 0 {
		m.MinTokens = 0 // no per-token cost: the floor means nothing
	}
	return m, nil
}

// candidate is the least-squares fit under one floor.
type candidate struct {
	m        Model
	sse, n   float64
	excess   float64 // median lone TTFT less the prefill step the fit gives it
	feasible bool    // that excess is not negative: the overhead can be ≥ 0
}

// choose picks the floor: the one whose fit has the least error among
// those whose prefill step for a lone request leaves its TTFT a
// non-negative overhead (maximum likelihood under that constraint), else
// the least error. Where the gaps alone would put more of TTFT into the
// prefill step than TTFT holds, the constraint moves the floor up until
// the prefill step fits inside the measured TTFT.
func choose(cands []candidate) candidate {
	var pick, least *candidate
	for i := range cands {
		c := &cands[i]
		if least == nil || c.sse < least.sse {
			least = c
		}
		if c.feasible && (pick == nil || c.sse < pick.sse) {
			pick = c
		}
	}
	if pick == nil {
		return *least
	}
	return *pick
}

// medianExcess is the weighted median, over the lone requests, of TTFT
// less the prefill step m gives them; any is false without lone requests.
// The median, not the mean: a lone TTFT is what a p50 prediction starts
// from, and one host stall would move the mean of a dozen requests by more
// than the overhead itself.
func medianExcess(m Model, reqs []request, lone []int, w []float64) (median float64, any bool) {
	return weightedMedian(reqs, lone, w, func(r request) float64 { return loneStep(m, r) })
}

// loneStep is the model's prefill step for a request alone in the engine.
func loneStep(m Model, r request) float64 {
	return m.StepMSFor(1, float64(r.prompt), 0)
}

// loneRequests are those sent while no other request was in flight: their
// TTFT is overhead plus their own prefill step.
func loneRequests(reqs []request) []int {
	var lone []int
	for i := range reqs {
		if reqs[i].warmup {
			continue
		}
		alone := true
		for k := range reqs {
			if k != i && reqs[k].sent <= reqs[i].first && reqs[k].end >= reqs[i].sent {
				alone = false
				break
			}
		}
		if alone {
			lone = append(lone, i)
		}
	}
	return lone
}

// bootstrap refits on requests resampled with replacement and reports
// each value's percentile interval and standard error.
func bootstrap(eqs [][]normal, fl []float64, reqs []request, lone []int, m Model, o Options) []Param {
	iters := o.Bootstrap
	if iters <= 0 {
		iters = DefaultBootstrap
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0xca11b))
	draws := make([][]float64, len(paramNames))
	w := make([]float64, len(reqs))
	for range iters {
		clear(w)
		for range reqs {
			w[rng.IntN(len(reqs))]++
		}
		b, err := fitWeighted(eqs, fl, reqs, lone, w)
		if err != nil {
			continue
		}
		for k, v := range values(b) {
			draws[k] = append(draws[k], v)
		}
	}
	out := make([]Param, len(paramNames))
	for k, v := range values(m) {
		p := Param{Name: paramNames[k], Value: v, Low: v, High: v, Unit: paramUnits[k]}
		p.interval(draws[k])
		out[k] = p
	}
	return out
}

// The fitted values in the order of paramNames, as Model's JSON
// names them.
var (
	paramNames = []string{"step_ms", "per_token_ms", "min_tokens", "per_seq_ms", "per_kv_token_ms", "request_overhead_ms"}
	paramUnits = []string{"ms", "ms/token", "tokens", "ms/sequence", "ms/token", "ms"}
)

func values(m Model) []float64 {
	return []float64{m.StepMS, m.PerTokenMS, m.MinTokens, m.PerSeqMS, m.PerKVTokenMS, m.RequestOverheadMS}
}
