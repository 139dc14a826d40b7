package slo

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/workload"
	"github.com/servebench/servebench/internal/yamlfield"
)

// Objective is a serving objective: what is served, the workload, the
// load, and the SLOs that must hold. The YAML form is documented in
// docs/METRICS.md (Objectives); see also the presets.
type Objective struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description,omitempty" yaml:"description"`
	// Model and Quantization are labels recorded with the run; the model
	// name sent to the server is run's --model.
	Model        string `json:"model,omitempty" yaml:"model"`
	Quantization string `json:"quantization,omitempty" yaml:"quantization"`
	// Workload is what is sent, as run's workload flags would set it; its
	// YAML keys are those of workload.Spec (docs/WORKLOADS.md).
	Workload workload.Spec `json:"-" yaml:"workload"`
	// Workloads, when it lists several cells, makes the objective a
	// workload matrix: each cell is Workload with its two lengths, judged
	// at every load on its own (a verdict and a capacity per workload).
	Workloads []workload.Lengths `json:"workloads,omitempty" yaml:"workloads"`
	Load      Load               `json:"load" yaml:"load"`
	// ContextLength is the context (prompt + output tokens) the server
	// must accept; checked against what the server reports (max_model_len).
	ContextLength int `json:"context_length,omitempty" yaml:"context_length"`
	// NoOOM adds the SLO "out_of_memory <= 0".
	NoOOM bool  `json:"no_oom" yaml:"no_oom"`
	SLOs  []SLO `json:"slos" yaml:"slos"`
	// Priority says what matters more when candidates tie: throughput or
	// responsiveness.
	Priority string `json:"priority" yaml:"priority"`
	// TraceRate, when the objective judges a trace replay (OnTrace), is
	// the replay's own rate, the trace's nominal rate: loads are also
	// said as multiples of it. Never read from a file.
	TraceRate float64 `json:"trace_rate,omitempty" yaml:"-"`
}

// OnTrace makes o judge a trace replay whose own rate is rate: the trace
// gives the load and the lengths, so o's load becomes that rate, the one
// level and the target unless target (a rate, from the command line)
// names another, and its workload the trace's; o's own load and
// workload, made for synthetic requests, are set aside.
func (o *Objective) OnTrace(rate float64, maxConcurrency int, target float64) {
	o.TraceRate = rate
	o.Load = Load{Rate: []float64{rate}, MaxConcurrency: maxConcurrency, Target: cmp.Or(target, rate)}
	o.Workload = workload.Spec{PromptTokens: record.TraceLengths, OutputTokens: record.TraceLengths}
	o.Workloads = nil
}

// Priorities.
const (
	PriorityThroughput     = "throughput"
	PriorityResponsiveness = "responsiveness"
)

// Load is the load the objective is judged at: closed-loop concurrency
// levels or open-loop request rates, and the target load at which the
// objective must hold.
type Load struct {
	Concurrency    []int     `json:"concurrency,omitempty" yaml:"concurrency"`
	Rate           []float64 `json:"rate,omitempty" yaml:"rate"`
	MaxConcurrency int       `json:"max_concurrency,omitempty" yaml:"max_concurrency"`
	// Target is the load at which the objective must hold; 0 means the
	// highest load listed.
	Target   float64 `json:"target,omitempty" yaml:"target"`
	Requests int     `json:"requests,omitempty" yaml:"requests"`
	Duration string  `json:"duration,omitempty" yaml:"duration"`
	Warmup   string  `json:"warmup,omitempty" yaml:"warmup"`
}

// Open reports whether the load is open-loop (request rates).
func (l Load) Open() bool { return len(l.Rate) > 0 }

// Levels returns the listed loads as record.Loads, in the order given.
func (l Load) Levels() []record.Load {
	var out []record.Load
	for _, c := range l.Concurrency {
		out = append(out, record.Load{Concurrency: c})
	}
	for _, r := range l.Rate {
		out = append(out, record.Load{Rate: r, MaxConcurrency: l.MaxConcurrency})
	}
	return out
}

// TargetLoad is the load at which the objective must hold.
func (l Load) TargetLoad() record.Load {
	t := l.Target
	if t == 0 {
		t = slices.Max(append(slices.Clone(l.Rate), intsToFloats(l.Concurrency)...))
	}
	if l.Open() {
		return record.Load{Rate: t, MaxConcurrency: l.MaxConcurrency}
	}
	return record.Load{Concurrency: int(t)}
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// Checks returns the SLOs to evaluate: the listed ones plus
// "out_of_memory <= 0" when NoOOM is set and none names out_of_memory.
func (o *Objective) Checks() []SLO {
	out := slices.Clone(o.SLOs)
	if o.NoOOM && !slices.ContainsFunc(out, func(s SLO) bool { return s.Metric == metricOOM }) {
		s, _ := Parse(metricOOM + " <= 0")
		out = append(out, s)
	}
	return out
}

// SetSLO adds s, replacing an SLO on the same metric and percentile.
func (o *Objective) SetSLO(s SLO) {
	for i := range o.SLOs {
		if o.SLOs[i].Key() == s.Key() {
			o.SLOs[i] = s
			return
		}
	}
	o.SLOs = append(o.SLOs, s)
}

// Overlay sets slos over o's SLOs (each replacing o's on the same metric
// and percentile, SetSLO) and, when target > 0, o's target load: how a
// recorded run is judged by an objective with the command line's SLOs.
func (o *Objective) Overlay(slos []SLO, target float64) {
	for _, s := range slos {
		o.SetSLO(s)
	}
	if target > 0 {
		// in the recorded run's kind, whatever o's own levels were:
		// JudgeRecorded lists the recorded loads
		o.Load.Target = target
		o.Load.Concurrency, o.Load.Rate = nil, nil
	}
}

// Validate reports the first invalid field as a *FieldError (without a
// line; ParseObjective adds it).
func (o *Objective) Validate() error {
	for _, f := range []struct{ name, v string }{{"name", o.Name}, {"model", o.Model}, {"quantization", o.Quantization}} {
		if strings.ContainsFunc(f.v, unicode.IsControl) {
			return fieldErr(f.name, "must be printable text")
		}
	}
	if err := o.Workload.Validate(); err != nil {
		var se *workload.SpecError
		if errors.As(err, &se) {
			return fieldErr("workload."+se.Key, "%v", se.Err)
		}
		return fieldErr("workload", "%v", err)
	}
	if err := o.validateWorkloads(); err != nil {
		return err
	}
	if err := o.Load.validate(); err != nil {
		return err
	}
	if o.ContextLength < 0 || o.ContextLength > 1<<30 {
		return fieldErr("context_length", "must be a whole number of tokens in [0, %d]", 1<<30)
	}
	if o.Priority != "" && o.Priority != PriorityThroughput && o.Priority != PriorityResponsiveness {
		return fieldErr("priority", "must be %q or %q (got %q)", PriorityThroughput, PriorityResponsiveness, o.Priority)
	}
	seen := map[string]bool{}
	for i, s := range o.SLOs {
		if seen[s.Key()] {
			return fieldErr(fmt.Sprintf("slos[%d]", i), "a second SLO on %s; keep one", strings.TrimSpace(s.Key()))
		}
		seen[s.Key()] = true
	}
	return nil
}

// validateWorkloads checks a list of workloads: two or more cells, each
// with lengths of its own, none repeated, each one that can be sent with
// the rest of the workload section.
func (o *Objective) validateWorkloads() error {
	switch {
	case len(o.Workloads) == 0:
		return nil
	case len(o.Workloads) == 1:
		return fieldErr("workloads", "lists one workload; give its lengths under workload: (prompt_tokens, output_tokens), or list two or more")
	case o.Workload.PromptTokens != "" || o.Workload.OutputTokens != "":
		return fieldErr("workload.prompt_tokens", "the lengths of a list of workloads are given in each of workloads:, not under workload:")
	}
	seen := map[string]int{}
	for i, c := range o.Workloads {
		cells, err := workload.Cross([]string{cmp.Or(c.PromptTokens, workload.DefaultPromptTokens)}, []string{cmp.Or(c.OutputTokens, workload.DefaultOutputTokens)})
		if err == nil {
			_, err = workload.Matrix(o.Workload, cells)
		}
		if err != nil {
			return fieldErr(fmt.Sprintf("workloads[%d]", i), "%v", err)
		}
		if j, ok := seen[cells[0].Label()]; ok {
			return fieldErr(fmt.Sprintf("workloads[%d]", i), "repeats workloads[%d] (%s)", j, cells[0].Label())
		}
		seen[cells[0].Label()] = i
		o.Workloads[i] = cells[0]
	}
	_, err := workload.Matrix(o.Workload, o.Workloads)
	if se, ok := errors.AsType[*workload.SpecError](err); ok {
		return fieldErr("workload."+se.Key, "%v", se.Err)
	} else if err != nil {
		return fieldErr("workloads", "%v", err)
	}
	return nil
}

// maxRequests bounds a load's request count far above any real run.
const maxRequests = 1 << 30

func (l Load) validate() error {
	switch {
	case len(l.Concurrency) > 0 && len(l.Rate) > 0:
		return fieldErr("load", "set concurrency or rate, not both: a run is closed-loop or open-loop")
	case len(l.Concurrency) == 0 && len(l.Rate) == 0:
		return fieldErr("load", "set concurrency (a list of virtual-user counts) or rate (a list of requests per second)")
	case l.MaxConcurrency < 0 || (l.MaxConcurrency > 0 && !l.Open()):
		return fieldErr("load.max_concurrency", "caps an open loop: use it with rate, and make it positive")
	case l.Requests < 0 || l.Requests > maxRequests:
		return fieldErr("load.requests", "must be a whole number in [0, %d]", maxRequests)
	}
	for i, c := range l.Concurrency {
		if c < 1 || c > 1<<20 {
			return fieldErr(fmt.Sprintf("load.concurrency[%d]", i), "must be a whole number in [1, %d]", 1<<20)
		}
	}
	for i, r := range l.Rate {
		if !(r > 0 && r <= 1e6) {
			return fieldErr(fmt.Sprintf("load.rate[%d]", i), "must be a rate in (0, 1e6] requests per second")
		}
	}
	if err := l.validateTarget(); err != nil {
		return err
	}
	if l.Duration != "" {
		if d, err := time.ParseDuration(l.Duration); err != nil || d < 0 {
			return fieldErr("load.duration", "want a duration such as 60s or 2m (got %q)", l.Duration)
		}
	}
	if l.Warmup != "" {
		if _, _, err := ParseWarmup(l.Warmup); err != nil {
			return fieldErr("load.warmup", "%v", err)
		}
	}
	return nil
}

func (l Load) validateTarget() error {
	t := l.Target
	switch {
	case math.IsNaN(t) || t < 0 || t > 1e6:
		return fieldErr("load.target", "must be a positive load (got %v)", t)
	case t > 0 && !l.Open() && t != math.Trunc(t):
		return fieldErr("load.target", "a concurrency is a whole number (got %v)", t)
	}
	return nil
}

// ParseWarmup reads a warm-up as a request count ("5") or a duration
// ("10s").
func ParseWarmup(s string) (requests int, d time.Duration, err error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n, 0, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, 0, fmt.Errorf("want a request count (5) or a duration (10s), got %q", s)
	}
	return 0, d, nil
}

// FieldError is an invalid objective or candidates field: its dotted
// path and, when it came from YAML, its line.
type FieldError = yamlfield.Error

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// MarshalJSON writes the objective with its workload under the YAML keys
// of the objective file, so summary.json and the file read alike.
func (o Objective) MarshalJSON() ([]byte, error) {
	type plain Objective
	w := map[string]any{}
	if b, err := yaml.Marshal(o.Workload); err == nil {
		_ = yaml.Unmarshal(b, &w)
	}
	return json.Marshal(struct {
		plain
		Workload map[string]any `json:"workload"`
	}{plain(o), w})
}
