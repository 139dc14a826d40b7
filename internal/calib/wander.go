package calib

import (
	"cmp"
	"math"
	"slices"

	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/stats"
)

// Wander is the server's own slow change of speed within the run: its
// decode steps, set against the fitted model at their batch and context,
// run faster and slower for seconds at a time (a CPU server sharing its
// host does, by ±15% over about a second). The simulator replays it as
// Config.Wander: without it every user of a closed loop decodes at the
// same speed, and the median of a point whose requests fall into groups
// (the one whose decode window holds the others' prefills, and the rest)
// sits at the faster group's centre where the server's sits below it.
type Wander struct {
	// SD is the standard deviation of the speed, as a fraction of the
	// model's; TimeS its correlation time, seconds.
	SD    float64 `json:"sd"`
	TimeS float64 `json:"time_s"`
	// The measurement: windows of WindowMS, Windows of them with enough
	// decode-only steps, and Lag1, the correlation of adjacent windows'
	// speeds.
	WindowMS float64 `json:"window_ms"`
	Windows  int     `json:"windows"`
	Lag1     float64 `json:"lag1"`
}

// The wander estimator's settings.
const (
	// wanderSteps is the window in median decode gaps: long enough that a
	// window's median speed is not its steps' own jitter, short against
	// the seconds a wander lasts.
	wanderSteps = 20
	// minWindowGaps is the fewest decode-only gaps a window needs.
	minWindowGaps = 8
	// minWindows is the fewest windows an estimate is made from.
	minWindows = 30
	// minLag1 is the correlation of adjacent windows below which the
	// speed is taken as steady: what changes from one window to the next
	// is the steps' own noise, which the jitter already is.
	minLag1 = 0.2
)

// estimateWander measures the wander from the run's decode-only gaps (no
// prompt in the step). Each gap over the model's step for its batch and
// context, and that over the median of such ratios at its batch size (so
// that a model a little off at one size does not read as a change when
// the run moves between sizes), is the step's slowness. Over windows of
// wanderSteps median gaps, a window's speed is one over its median
// slowness, normalised to a mean of 1. Then, for an Ornstein-Uhlenbeck
// speed of sd σ and correlation time τ, read through windows of length
// w: the correlations of windows one and two apart stand in the ratio
// exp(−w/τ), which gives τ; the windows' variance, less what their steps'
// own jitter adds (the gaps' robust spread over √steps), is
// σ²·2(x−1+e⁻ˣ)/x² with x = w/τ, which gives σ. nil when the run holds
// too few windows or shows no wander (adjacent windows' speeds correlate
// below minLag1, or vary no more than their steps' jitter).
func estimateWander(gaps []gap, m Model) *Wander {
	wins, w, jitter := speedWindows(gaps, m)
	if len(wins) < minWindows {
		return nil
	}
	var mean float64
	for _, x := range wins {
		mean += x.speed
	}
	mean /= float64(len(wins))
	speeds := make([]float64, len(wins))
	var iid, variance float64
	for i := range wins {
		wins[i].speed /= mean
		speeds[i] = wins[i].speed
		variance += (speeds[i] - 1) * (speeds[i] - 1)
		// a median of n draws varies as 1.2533·sd/√n
		iid += math.Pow(1.2533*jitter, 2) / wins[i].steps
	}
	variance /= float64(len(wins))
	iid /= float64(len(wins))
	r1, r2 := lagCorrelation(wins, variance, 1), lagCorrelation(wins, variance, 2)
	slices.Sort(speeds)
	robust := (stats.Quantile(speeds, 0.9) - stats.Quantile(speeds, 0.1)) / 2.5631
	excess := robust*robust - iid // the variance the steps' jitter leaves unexplained
	if r1 < minLag1 || excess <= 0 {
		return nil
	}
	decay := r1 // one window apart, when the second lag says nothing
	if r2 > 0 && r2 < r1 {
		decay = r2 / r1
	}
	span := float64(wins[len(wins)-1].k+1) * w
	tau := math.Min(math.Max(-w/math.Log(decay), w/2), span/3)
	x := w / tau
	return &Wander{SD: math.Min(sim.MaxWander, math.Sqrt(excess/(2*(x-1+math.Exp(-x))/(x*x)))), TimeS: tau / 1e3,
		WindowMS: w, Windows: len(wins), Lag1: r1}
}

// speedWindow is one window of decode-only steps: its index from the
// first, its speed (one over its median slowness) and its distinct steps
// (a step's sequences each see it).
type speedWindow struct {
	k            int
	speed, steps float64
}

// speedWindows cuts the run's decode-only gaps into windows of
// wanderSteps median gaps (w ms), leaving out those with fewer than
// minWindowGaps; jitter is one gap's robust sd of slowness. None when the
// run holds too few gaps.
func speedWindows(gaps []gap, m Model) (wins []speedWindow, w, jitter float64) {
	type obs struct{ at, slow, seqs float64 }
	var seen []obs
	bySeqs := map[int][]float64{}
	var ms []float64
	for _, g := range gaps {
		if !decodeOnly(g) {
			continue
		}
		f := m.StepMSFor(g.seqs, g.tokens, g.kv)
		if !(f > 0) {
			continue
		}
		seen = append(seen, obs{at: g.at, slow: g.ms / f, seqs: g.seqs})
		bySeqs[int(g.seqs)] = append(bySeqs[int(g.seqs)], g.ms/f)
		ms = append(ms, g.ms)
	}
	if len(seen) < minWindows*minWindowGaps {
		return nil, 0, 0
	}
	medians := map[int]float64{}
	for k, v := range bySeqs {
		slices.Sort(v)
		medians[k] = stats.Quantile(v, 0.5)
	}
	dev := make([]float64, 0, len(seen))
	for i := range seen {
		seen[i].slow /= medians[int(seen[i].seqs)]
		dev = append(dev, math.Abs(seen[i].slow-1))
	}
	slices.Sort(dev)
	jitter = 1.4826 * stats.Quantile(dev, 0.5)
	slices.Sort(ms)
	w = wanderSteps * stats.Quantile(ms, 0.5)
	slices.SortFunc(seen, func(a, b obs) int { return cmp.Compare(a.at, b.at) })
	for i := 0; i < len(seen); {
		k := int((seen[i].at - seen[0].at) / w)
		var slow []float64
		steps := 0.0
		for ; i < len(seen) && int((seen[i].at-seen[0].at)/w) == k; i++ {
			slow = append(slow, seen[i].slow)
			steps += 1 / seen[i].seqs
		}
		if len(slow) >= minWindowGaps {
			slices.Sort(slow)
			wins = append(wins, speedWindow{k: k, speed: 1 / stats.Quantile(slow, 0.5), steps: steps})
		}
	}
	return wins, w, jitter
}

// lagCorrelation is the correlation of the speeds of windows d apart
// (speeds about 1, of variance v), over the pairs the run holds.
func lagCorrelation(wins []speedWindow, v float64, d int) float64 {
	var c float64
	n := 0
	for i := range wins {
		for j := i + 1; j < len(wins) && wins[j].k <= wins[i].k+d; j++ {
			if wins[j].k == wins[i].k+d {
				c += (wins[i].speed - 1) * (wins[j].speed - 1)
				n++
			}
		}
	}
	if n == 0 || v == 0 {
		return 0
	}
	return c / float64(n) / v
}
