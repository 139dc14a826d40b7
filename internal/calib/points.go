package calib

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// Errors in what a calibration is asked of a run; each is the caller's to
// fix, and errors.Is tells which.
var (
	// ErrNotMeasured: a concurrency the fit is to read (ConcSet) is not
	// one of the run's closed-loop points.
	ErrNotMeasured = errors.New("concurrency not measured")
	// ErrNoneHeldOut: the fit reads every closed-loop point of the run it
	// is checked against, so none is held out.
	ErrNoneHeldOut = errors.New("no point held out")
	// ErrNoPoint: the run has no closed-loop point to fit to or predict.
	ErrNoPoint = errors.New("no closed-loop point")
)

// InputError is an error of the kind ErrNotMeasured, ErrNoneHeldOut or
// ErrNoPoint, in its own words.
type InputError struct {
	Kind error
	Msg  string
	// FitExample, with ErrNotMeasured, is a list of concurrencies the run
	// measured (FitExample).
	FitExample string
}

func (e *InputError) Error() string        { return e.Msg }
func (e *InputError) Is(target error) bool { return target == e.Kind }

// ConcSet is the concurrencies of the closed-loop points a fit reads (the
// --fit-concurrency list). nil reads every point of the run.
type ConcSet map[int]bool

// NewConcSet is the set of the concurrencies listed; nil for none.
func NewConcSet(l []int) ConcSet {
	if len(l) == 0 {
		return nil
	}
	set := ConcSet{}
	for _, c := range l {
		set[c] = true
	}
	return set
}

// String lists the set in order, as the flag takes it.
func (s ConcSet) String() string {
	return ListText(slices.Sorted(maps.Keys(s)))
}

// part is the run cut to its closed-loop points whose concurrency is in
// the set (in true), or to all its other points (in false), with their
// records. The summary is a copy; the run's own is left as it is.
func (s ConcSet) part(run Run, in bool) Run {
	keep := func(l record.Load) bool { return (l.Concurrency > 0 && s[l.Concurrency]) == in }
	cut := *run.Summary
	cut.Points = nil
	for _, p := range run.Summary.Points {
		if keep(p.Load) {
			cut.Points = append(cut.Points, p)
		}
	}
	var kept []*record.Record
	for _, r := range run.Records {
		if keep(r.Load) {
			kept = append(kept, r)
		}
	}
	return Run{Dir: run.Dir, Summary: &cut, Records: kept}
}

// missing is an ErrNotMeasured naming the listed concurrencies that no
// closed-loop point of the run has, nil when it has them all.
func (s ConcSet) missing(run Run) error {
	has := map[int]bool{}
	var all []int
	for _, p := range run.Summary.Points {
		if c := p.Load.Concurrency; c > 0 && !has[c] {
			has[c] = true
			all = append(all, c)
		}
	}
	var lack []int
	for _, c := range slices.Sorted(maps.Keys(s)) {
		if !has[c] {
			lack = append(lack, c)
		}
	}
	if len(lack) == 0 {
		return nil
	}
	slices.Sort(all)
	return &InputError{Kind: ErrNotMeasured, Msg: fmt.Sprintf("--fit-concurrency %s: %s has no closed-loop point at concurrency %s (its points: %s)", s, run.Dir,
		ListText(lack), ListText(all)), FitExample: FitExample(run.Summary)}
}

// ListText is "1,4", or "none".
func ListText(l []int) string {
	if len(l) == 0 {
		return "none"
	}
	var s []string
	for _, c := range l {
		s = append(s, fmt.Sprint(c))
	}
	return strings.Join(s, ",")
}

// ownPoints are the run's closed-loop points as predictable loads.
func ownPoints(sum *metrics.Summary) []Point {
	var pts []Point
	for _, p := range sum.Points {
		if p.Load.Concurrency < 1 || p.Requests.Completed < 1 {
			continue
		}
		warm := 0
		if p.Warmup != nil {
			warm = p.Warmup.Count
		}
		pts = append(pts, Point{Concurrency: p.Load.Concurrency, PromptTokens: int(math.Round(p.PromptTokensMean)),
			OutputTokens: int(math.Round(p.OutputTokensMean)), Requests: p.Requests.Completed + p.Requests.Failed, Warmup: warm})
	}
	return pts
}

// FitExample is a --fit-concurrency for the run: its two lowest
// concurrencies.
func FitExample(sum *metrics.Summary) string {
	var cs []int
	for _, p := range ownPoints(sum) {
		if !slices.Contains(cs, p.Concurrency) {
			cs = append(cs, p.Concurrency)
		}
	}
	slices.Sort(cs)
	return ListText(cs[:min(2, len(cs))])
}

// Loads are the loads and lengths to predict: the lists crossed, an absent
// one defaulting to the run's (its concurrencies, its mean lengths).
// Requests and Warmup, when set (Warmup not negative), replace the run's
// per-point counts.
type Loads struct {
	Concurrency, PromptTokens, OutputTokens []int
	Requests, Warmup                        int
}

// Points are the loads to predict: the lists crossed, each length
// defaulting to the run's mean and the request counts to the run's, so
// that a prediction has the start-up of the measurement beside it.
func (c *Calibration) Points(l Loads) ([]Point, error) {
	own := ownPoints(c.Run.Summary)
	if len(own) == 0 {
		return nil, &InputError{Kind: ErrNoPoint, Msg: fmt.Sprintf("%s: the run has no closed-loop point (--concurrency) to fit to", c.Run.Dir)}
	}
	base := own[0]
	for _, p := range own {
		base.Requests, base.Warmup = max(base.Requests, p.Requests), max(base.Warmup, p.Warmup)
	}
	if l.Requests > 0 {
		base.Requests = l.Requests
	}
	if l.Warmup >= 0 {
		base.Warmup = l.Warmup
	}
	if l.Concurrency == nil && l.PromptTokens == nil && l.OutputTokens == nil {
		return own, nil
	}
	or := func(l []int, def int) []int {
		if l == nil {
			return []int{def}
		}
		return l
	}
	var pts []Point
	for _, c := range or(l.Concurrency, base.Concurrency) {
		for _, p := range or(l.PromptTokens, base.PromptTokens) {
			for _, o := range or(l.OutputTokens, base.OutputTokens) {
				pts = append(pts, Point{Concurrency: c, PromptTokens: p, OutputTokens: o, Requests: base.Requests, Warmup: base.Warmup})
			}
		}
	}
	return pts, nil
}
