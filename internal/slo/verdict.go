package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Verdict is the objective judged over a whole run: per load, the
// capacity, the saturation point and whether the objective holds at its
// target load. It is the "verdict" of summary.json (docs/OUTPUT.md).
type Verdict struct {
	Objective  string      `json:"objective"`
	TargetLoad record.Load `json:"target_load"`
	// Holds is true when every SLO passes at the target load and every
	// requirement the server reported on is met; Reasons say why not.
	Holds   bool     `json:"holds"`
	Reasons []string `json:"reasons"`
	// Inconclusive is true when the target load's evidence cannot carry
	// its result (PointVerdict.Validity) and nothing else decided it:
	// neither HOLDS nor NOT MET (exit 4). Conclusion is "holds",
	// "not_met" or "inconclusive".
	Inconclusive bool   `json:"inconclusive"`
	Conclusion   string `json:"conclusion"`
	// Failing is true when the target load failed for reasons no load
	// explains (PointVerdict.Failing): the server is misconfigured or
	// broken, and the objective was not really judged (exit 1, not 3).
	Failing      bool           `json:"failing"`
	Points       []PointVerdict `json:"points"`
	Capacity     Capacity       `json:"capacity"`
	Saturation   Saturation     `json:"saturation"`
	Requirements []Requirement  `json:"requirements"`
	// Text is the verdict in one sentence a person can act on.
	Text string `json:"text"`
	// Workload names the cell a verdict of Workloads judges.
	Workload string `json:"workload,omitempty"`
	// Workloads, in a workload matrix, are the verdicts of each cell in
	// the order they ran: its points, capacity, saturation and whether it
	// holds at the target load. The matrix holds when every cell does; its
	// Capacity is the lowest cell's (the load every workload meets) and
	// its Saturation is per cell only.
	Workloads []*Verdict `json:"workloads,omitempty"`
}

// Saturation is the knee of the run's loads (stats.Saturation).
type Saturation struct {
	Found bool `json:"found"`
	// Load is the saturation point: beyond it aggregate throughput grows
	// by less than Gain of the load's growth while latency rises. Next is
	// the next load measured.
	Load      *record.Load `json:"load"`
	Next      *record.Load `json:"next_load"`
	OutputTPS float64      `json:"output_tps"`
	NextTPS   float64      `json:"next_output_tps"`
	// SpeedP5 is the per-request decode speed 95% of requests reached at
	// Load (decode_tps_per_request p5).
	SpeedP5 *float64 `json:"decode_tps_per_request_p5"`
	Gain    float64  `json:"gain"`
	// MaxThroughputLoad is where aggregate throughput was highest.
	MaxThroughputLoad *record.Load `json:"max_throughput_load"`
	// Inconclusive says at which load, and why, the loads stopped being
	// evidence: saturation is judged only below it.
	Inconclusive string `json:"inconclusive,omitempty"`
}

// Requirement is a property of the server the objective requires.
type Requirement struct {
	Name     string `json:"name"`
	Required int    `json:"required"`
	// Reported is what the server said (null when it did not); Pass is
	// null then too, and the verdict warns instead of failing.
	Reported *int   `json:"reported"`
	Pass     *bool  `json:"pass"`
	Note     string `json:"note"`
}

// Judge builds the verdict. pts are the per-load verdicts ordered by
// workload, then load (Evaluator.Evaluate); capy holds the search result
// per workload ("" when the run has one), and a workload without one
// reads its capacity off the sweep; server is what the server said about
// itself (max_model_len). A workload matrix is judged per cell (judgeMatrix).
func Judge(o *Objective, pts []PointVerdict, capy map[string]*Capacity, server map[record.ServerKey]string) *Verdict {
	if cells := byWorkload(pts); len(cells) > 1 || (len(cells) == 1 && cells[0][0].Load.Workload != "") {
		return judgeMatrix(o, cells, capy, requirements(o, server))
	}
	return judge(o, pts, capy[""], requirements(o, server), "")
}

// judge is the verdict of one workload's points.
func judge(o *Objective, pts []PointVerdict, capy *Capacity, reqs []Requirement, workload string) *Verdict {
	v := &Verdict{Objective: o.Name, TargetLoad: o.Load.TargetLoad(), Points: pts, Reasons: []string{}, Workload: workload}
	v.TargetLoad.Workload = workload
	if capy != nil {
		v.Capacity = *capy
	} else {
		v.Capacity = FromSweep(pts)
	}
	v.Saturation = saturation(pts)
	v.Requirements = reqs
	v.Holds = true
	at, ok := findLoad(pts, v.TargetLoad)
	switch {
	case !ok:
		v.Holds = false
		v.Reasons = append(v.Reasons, "the target load "+v.TargetLoad.Text(record.LoadLong)+" was not measured")
	case at.Failing == "" && at.Inconclusive():
		v.Holds, v.Inconclusive = false, true
		v.Reasons = append(v.Reasons, inconclusiveText(at))
	case !at.Pass:
		v.Holds = false
		v.Failing = at.Failing != ""
		v.Reasons = append(v.Reasons, failures(at)...)
	}
	for _, r := range v.Requirements {
		if r.Pass != nil && !*r.Pass {
			// what the server says of itself needs no load to be believed
			v.Holds, v.Inconclusive = false, false
			v.Reasons = append(v.Reasons, r.Note)
		}
	}
	v.conclude()
	v.Text = v.text(o)
	return v
}

// conclude names the verdict's conclusion.
func (v *Verdict) conclude() {
	switch {
	case v.Holds:
		v.Conclusion = ConclusionHolds
	case v.Inconclusive:
		v.Conclusion = ConclusionInconclusive
	default:
		v.Conclusion = ConclusionNotMet
	}
}

func findLoad(pts []PointVerdict, l record.Load) (PointVerdict, bool) {
	for _, p := range pts {
		if p.Load == l {
			return p, true
		}
	}
	return PointVerdict{}, false
}

func saturation(pts []PointVerdict) Saturation {
	s := Saturation{Gain: stats.DefaultSaturationGain}
	all := len(pts)
	pts, stop := saturationEvidence(pts)
	if stop != nil && all >= 2 { // one load has no knee to judge anyway
		s.Inconclusive = invalidText(*stop)
	}
	loads, tps, lat := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
	best := -1
	for i, p := range pts {
		loads[i], tps[i], lat[i] = LoadValue(p.Load), p.OutputTPS, nan(p.E2EMeanMS)
		if p.OutputTPS > 0 && (best < 0 || p.OutputTPS > pts[best].OutputTPS) {
			best = i
		}
	}
	if best >= 0 {
		l := pts[best].Load
		s.MaxThroughputLoad = &l
	}
	i, ok := stats.Saturation(loads, tps, lat, s.Gain)
	if !ok {
		return s
	}
	l, n := pts[i].Load, pts[i+1].Load
	s.Found, s.Load, s.Next = true, &l, &n
	s.OutputTPS, s.NextTPS, s.SpeedP5 = pts[i].OutputTPS, pts[i+1].OutputTPS, pts[i].SpeedP5
	return s
}

func requirements(o *Objective, server map[record.ServerKey]string) []Requirement {
	out := []Requirement{}
	if o.ContextLength <= 0 {
		return out
	}
	r := Requirement{Name: "context_length", Required: o.ContextLength}
	n, err := strconv.Atoi(server[record.ServerMaxModelLen])
	if err != nil || n <= 0 {
		r.Note = fmt.Sprintf("the server did not report its context length; the objective requires %d tokens", o.ContextLength)
		return append(out, r)
	}
	pass := n >= o.ContextLength
	r.Reported, r.Pass = &n, &pass
	if pass {
		r.Note = fmt.Sprintf("the server accepts %d tokens of context (%d required)", n, o.ContextLength)
	} else {
		r.Note = fmt.Sprintf("the server accepts only %d tokens of context; the objective requires %d", n, o.ContextLength)
	}
	return append(out, r)
}

// failures describes each failed SLO at a load: "ttft p95 2.1s > 1s".
func failures(pv PointVerdict) []string {
	var out []string
	if pv.Failing != "" {
		out = append(out, "failing at "+pv.Load.Text(record.LoadLong)+", not overloaded: "+pv.Failing)
	} else if pv.AllFailed {
		out = append(out, "every request failed at "+pv.Load.Text(record.LoadLong))
	}
	if pv.Overloaded != "" {
		out = append(out, "overloaded at "+pv.Load.Text(record.LoadLong)+": "+pv.Overloaded)
	}
	for _, c := range pv.Checks {
		if !c.Pass {
			out = append(out, c.Shortfall())
		}
	}
	return out
}

// Shortfall says how a failed check missed: "ttft p95 2.1s > 1s", or that
// nothing was measured.
func (c Check) Shortfall() string {
	s := c.slo
	name := strings.TrimSpace(s.Metric + " " + s.Percentile)
	if c.Measured == nil {
		return name + " not measured (no successful request)"
	}
	neg := map[string]string{"<=": ">", "<": ">=", ">=": "<", ">": "<="}[s.Op]
	return fmt.Sprintf("%s %s %s %s", name, s.Format(*c.Measured), neg, s.Format(s.Value))
}

func nan(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Report is summary.json for a run with an objective: every field of the
// summary, plus the objective as run and its verdict.
type Report struct {
	*metrics.Summary
	Objective *Objective `json:"objective"`
	Verdict   *Verdict   `json:"verdict"`
}
