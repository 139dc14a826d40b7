package slo

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/servebench/servebench/internal/workload"
)

// Overrides are a command line's settings of an objective's fields. A nil
// slice or pointer, and a Target of 0 or less, was not given.
type Overrides struct {
	// PromptTokens and OutputTokens are length distributions; several of
	// either make a workload matrix, crossed with the other's.
	PromptTokens, OutputTokens []string
	// Workload holds the other workload settings; only the fields whose
	// flags WorkloadGiven names apply (workload.Spec.Override).
	Workload      workload.Spec
	WorkloadGiven []string
	// Concurrency and Rate are load levels; giving both is an error.
	Concurrency    []int
	Rate           []float64
	MaxConcurrency *int
	// Requests and Duration replace the objective's amount together.
	Requests *int
	Duration *time.Duration
	Warmup   *Warmup
	Target   float64
	// SLOs replace the objective's SLO on the same metric and percentile,
	// or are added.
	SLOs []SLO
}

// Warmup is a load point's warm-up: a request count or a duration.
type Warmup struct {
	Requests int
	Duration time.Duration
}

// String is the warm-up as an objective's load.warmup writes it: "10s",
// "5", or "" for none.
func (w Warmup) String() string {
	switch {
	case w.Duration > 0:
		return w.Duration.String()
	case w.Requests > 0:
		return strconv.Itoa(w.Requests)
	}
	return ""
}

// ErrClosedAndOpen refuses a command line that gives both kinds of load.
var ErrClosedAndOpen = errors.New("--concurrency and --rate are exclusive: one run is closed-loop or open-loop")

// Resolve applies a command line's overrides to an objective and returns
// the run's specification: each setting given replaces the objective's
// field, the objective's fields stand for the rest, and the result is
// validated. o is not modified.
//
// An error is a *workload.SpecError for length flags that cannot be
// crossed, ErrClosedAndOpen, or else one naming the objective and its
// invalid field.
func Resolve(o Objective, ov Overrides) (*Objective, error) {
	r := o
	r.SLOs, r.Workloads = slices.Clone(o.SLOs), slices.Clone(o.Workloads)
	if err := r.overrideLengths(ov.PromptTokens, ov.OutputTokens); err != nil {
		return nil, err
	}
	r.Workload = r.Workload.Override(ov.Workload, ov.WorkloadGiven)
	r.Load.override(ov)
	for _, s := range ov.SLOs {
		r.SetSLO(s)
	}
	if ov.Target > 0 {
		r.Load.Target = ov.Target
	}
	if len(r.Checks()) == 0 {
		return nil, fmt.Errorf("objective %s has no SLO", r.Name)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("objective %s: %w", r.Name, err)
	}
	// Last, as a run without an objective refuses it when it plans.
	if ov.Concurrency != nil && ov.Rate != nil {
		return nil, ErrClosedAndOpen
	}
	return &r, nil
}

// overrideLengths applies length flags. Given, they replace the
// objective's lengths and its list of workloads (several make a matrix,
// whose cells become the list); otherwise the list, or the lengths with
// their defaults, stand.
func (o *Objective) overrideLengths(prompts, outputs []string) error {
	w := &o.Workload
	if prompts == nil && outputs == nil && len(o.Workloads) > 0 {
		return nil
	}
	if prompts == nil {
		prompts = []string{cmp.Or(w.PromptTokens, workload.DefaultPromptTokens)}
	}
	if outputs == nil {
		outputs = []string{cmp.Or(w.OutputTokens, workload.DefaultOutputTokens)}
	}
	o.Workloads = nil
	if len(prompts) == 1 && len(outputs) == 1 {
		w.PromptTokens, w.OutputTokens = prompts[0], outputs[0]
		return nil
	}
	w.PromptTokens, w.OutputTokens = "", ""
	var err error
	o.Workloads, err = workload.Cross(prompts, outputs)
	return err
}

// override applies the load flags: levels given replace the objective's
// (and a target of the other kind), requests and duration go together,
// and a warm-up given replaces the objective's.
func (l *Load) override(ov Overrides) {
	if ov.Concurrency != nil || ov.Rate != nil {
		wasOpen := l.Open()
		l.Concurrency, l.Rate = ov.Concurrency, ov.Rate
		if ov.Rate != nil {
			l.Concurrency = nil
		}
		if wasOpen != l.Open() {
			l.Target = 0 // a concurrency is no target for a rate, nor the reverse
		}
	}
	if ov.MaxConcurrency != nil {
		l.MaxConcurrency = *ov.MaxConcurrency
	}
	if ov.Requests != nil || ov.Duration != nil || (l.Requests == 0 && l.Duration == "") {
		l.Requests, l.Duration = 0, ""
		if ov.Requests != nil {
			l.Requests = *ov.Requests
		}
		if ov.Duration != nil && *ov.Duration > 0 {
			l.Duration = ov.Duration.String()
		}
	}
	if ov.Warmup != nil {
		l.Warmup = ov.Warmup.String()
	}
}

// Amount is how long each point of a validated load is measured, and its
// warm-up.
func (l Load) Amount() (requests int, d time.Duration, warm Warmup) {
	if l.Duration != "" {
		d, _ = time.ParseDuration(l.Duration)
	}
	if l.Warmup != "" {
		warm.Requests, warm.Duration, _ = ParseWarmup(l.Warmup)
	}
	return l.Requests, d, warm
}
