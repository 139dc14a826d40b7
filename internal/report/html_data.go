package report

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
)

// The data an HTML page embeds (one JSON document the page's script
// draws from). Its shape is the page's own, not a file contract: it may
// change with the page.

// maxTimelineBins bounds a run's timeline: a few pixels a bin on a wide
// screen, whatever the run's length.
const maxTimelineBins = 400

type pageData struct {
	Title    string        `json:"title"`
	Answer   *HTMLAnswer   `json:"answer"`
	Runs     []runData     `json:"runs"`
	Tables   []HTMLTable   `json:"tables"`
	Frontier *frontierData `json:"frontier,omitempty"`
}

type runData struct {
	Name     string            `json:"name"`
	Verdict  *verdictData      `json:"verdict"`
	Groups   []groupData       `json:"groups"`
	Timeline *metrics.Timeline `json:"timeline"`
	About    []aboutSection    `json:"about"`
	Warnings []string          `json:"warnings"`
	Trace    *traceData        `json:"trace,omitempty"`
}

// verdictData is the verdict as the page states it first: whether the
// objective holds at its target, the capacity, the saturation point and
// the SLOs that bound the capacity.
type verdictData struct {
	Objective  string   `json:"objective"`
	Holds      bool     `json:"holds"`
	Failing    bool     `json:"failing"`
	Text       string   `json:"text"`
	Reasons    []string `json:"reasons"`
	TargetLoad string   `json:"target_load"`
	Capacity   string   `json:"capacity"`
	FailsAt    string   `json:"fails_at"`
	Binding    []string `json:"binding"`
	Saturation string   `json:"saturation"`
	SLOs       []string `json:"slos"`
	// Workload and Workloads: a workload matrix's verdict has one per cell,
	// in the order the cells ran (slo.Verdict.Workloads).
	Workload  string        `json:"workload"`
	Workloads []verdictData `json:"workloads"`
	// Inconclusive: the target load's evidence cannot carry a result;
	// Reasons say why, beside the headline.
	Inconclusive bool `json:"inconclusive"`
}

// groupData is one workload cell's load points (the whole run when it has
// one workload).
type groupData struct {
	Workload string      `json:"workload"`
	Axis     string      `json:"axis"`
	Points   []pointData `json:"points"`
	// Saturation is the load (x) beyond which throughput stopped growing
	// with load, when the sweep shows one.
	Saturation      *float64  `json:"saturation"`
	SaturationLabel string    `json:"saturation_label"`
	SLOs            []sloLine `json:"slos"`
	CDFs            []cdfData `json:"cdfs"`
}

type pointData struct {
	Label string  `json:"label"`
	X     float64 `json:"x"`
	Held  bool    `json:"held"`
	// Superseded: run.json marks the point as measured again; the charts
	// leave it out, the table shows it.
	Superseded bool `json:"superseded,omitempty"`
	Completed  int  `json:"completed"`
	Failed     int  `json:"failed"`
	// SpeedP50 and SpeedP95 are per-request decode speeds: the median, and
	// the speed 95% of requests reached (the distribution's p5).
	SpeedP50  *float64 `json:"speed_p50"`
	SpeedP95  *float64 `json:"speed_p95"`
	OutputTPS float64  `json:"output_tps"`
	TTFT      pcts     `json:"ttft_ms"`
	ITL       pcts     `json:"itl_ms"`
	E2E       pcts     `json:"e2e_ms"`
}

type pcts struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// sloLine is an SLO drawn on the chart of its metric.
type sloLine struct {
	Chart string  `json:"chart"`
	Stat  string  `json:"stat"`
	Value float64 `json:"value"`
	Expr  string  `json:"expr"`
}

type cdfData struct {
	Label string      `json:"label"`
	TTFT  metrics.CDF `json:"ttft"`
	ITL   metrics.CDF `json:"itl"`
}

// buildPage gathers what the page draws from the runs.
func buildPage(p *HTMLPage) pageData {
	d := pageData{Title: p.Title, Answer: p.Answer, Runs: []runData{}, Tables: p.Tables, Frontier: p.Frontier}
	if d.Tables == nil {
		d.Tables = []HTMLTable{}
	}
	for i := range p.Runs {
		d.Runs = append(d.Runs, buildRun(&p.Runs[i]))
		if t := prefixTable(&p.Runs[i], len(p.Runs) > 1); t != nil {
			d.Tables = append(d.Tables, *t)
		}
	}
	return d
}

func buildRun(r *HTMLRun) runData {
	d := runData{Name: r.Name, Groups: []groupData{}, Warnings: nonNil(warnings(r.Summary)), About: about(r.Summary), Trace: buildTrace(r.Summary)}
	if r.Verdict != nil {
		d.Verdict = buildVerdict(r.Objective, r.Verdict)
	}
	var curves []metrics.PointCurves
	if r.Curves != nil {
		curves = r.Curves.Points()
		tl := r.Curves.Timeline(maxTimelineBins)
		d.Timeline = &tl
	}
	for _, w := range workloads(r.Summary) {
		d.Groups = append(d.Groups, buildGroup(r, w, curves))
	}
	return d
}

// workloads lists the run's workload cells in the order their first
// point ran ("" for a run of one workload).
func workloads(s *metrics.Summary) []string {
	var out []string
	for _, p := range s.Points {
		if !slices.Contains(out, p.Load.Workload) {
			out = append(out, p.Load.Workload)
		}
	}
	return out
}

func buildGroup(r *HTMLRun, workload string, curves []metrics.PointCurves) groupData {
	g := groupData{Workload: workload, Axis: "concurrency", Points: []pointData{}, SLOs: sloLines(r.Objective), CDFs: []cdfData{}}
	repeats := repeatLabels(r.Summary)
	for i := range r.Summary.Points {
		p := &r.Summary.Points[i]
		if p.Load.Workload != workload {
			continue
		}
		if p.Load.Rate > 0 {
			g.Axis = "request rate (req/s)"
		}
		pd := buildPoint(p)
		pd.Label += repeats[p.Index]
		pd.Superseded = r.Summary.Run.Superseded(p.Index)
		g.Points = append(g.Points, pd)
	}
	slices.SortStableFunc(g.Points, func(a, b pointData) int { return cmp.Compare(a.X, b.X) })
	for _, c := range curves {
		if c.Load.Workload == workload {
			g.CDFs = append(g.CDFs, cdfData{Label: c.Load.Text(record.LoadShort) + repeats[c.Index], TTFT: c.TTFT, ITL: c.ITL})
		}
	}
	g.Saturation, g.SaturationLabel = saturation(r, workload)
	return g
}

// repeatLabels tells a load measured more than once apart on the page:
// " · repeat 2/3" for the second of three (--repeat), in the order they
// ran, and " · superseded" for a point run.json marks as measured again;
// nothing for a load measured once. By point index.
func repeatLabels(s *metrics.Summary) map[int]string {
	out := map[int]string{}
	byLoad := map[record.Load][]int{}
	for _, p := range s.Points {
		if s.Run.Superseded(p.Index) {
			out[p.Index] = " · superseded"
			continue
		}
		byLoad[p.Load] = append(byLoad[p.Load], p.Index)
	}
	for _, idx := range byLoad {
		if len(idx) < 2 {
			continue
		}
		slices.Sort(idx)
		for k, i := range idx {
			out[i] = " · repeat " + strconv.Itoa(k+1) + "/" + strconv.Itoa(len(idx))
		}
	}
	return out
}

func buildPoint(p *metrics.PointSummary) pointData {
	return pointData{
		Label: p.Load.Text(record.LoadShort), X: slo.LoadValue(p.Load), Held: p.LoadHeld,
		Completed: p.Requests.Completed, Failed: p.Requests.Failed,
		SpeedP50: p.DecodeTPSReq.P50, SpeedP95: p.DecodeTPSReq.P5, OutputTPS: p.OutputTPS,
		TTFT: pctsOf(p.TTFT), ITL: pctsOf(p.ITL), E2E: pctsOf(p.E2E),
	}
}

func pctsOf(d stats.Dist) pcts { return pcts{P50: d.P50, P95: d.P95, P99: d.P99} }

// saturation is the knee of a workload's sweep: the verdict's when the
// run was judged on this workload, else found the same way
// (stats.Saturation) from the summary's points, repeats of a load pooled
// by their mean.
func saturation(r *HTMLRun, workload string) (*float64, string) {
	if v := verdictOf(r.Verdict, workload); v != nil {
		if !v.Saturation.Found || v.Saturation.Load == nil {
			return nil, ""
		}
		x := slo.LoadValue(*v.Saturation.Load)
		return &x, v.Saturation.Load.Text(record.LoadShort)
	}
	var loads []record.Load
	tps, lat := map[record.Load][]float64{}, map[record.Load][]float64{}
	for _, p := range r.Summary.Points {
		if p.Load.Workload != workload {
			continue
		}
		if _, seen := tps[p.Load]; !seen {
			loads = append(loads, p.Load)
		}
		tps[p.Load] = append(tps[p.Load], p.OutputTPS)
		lat[p.Load] = append(lat[p.Load], deref(p.E2E.Mean))
	}
	slices.SortStableFunc(loads, func(a, b record.Load) int { return cmp.Compare(slo.LoadValue(a), slo.LoadValue(b)) })
	xs, ys, ls := make([]float64, len(loads)), make([]float64, len(loads)), make([]float64, len(loads))
	for i, l := range loads {
		xs[i], ys[i], ls[i] = slo.LoadValue(l), mean(tps[l]), mean(lat[l])
	}
	i, ok := stats.Saturation(xs, ys, ls, stats.DefaultSaturationGain)
	if !ok {
		return nil, ""
	}
	return &xs[i], loads[i].Text(record.LoadShort)
}

// verdictOf is the verdict that judged a workload cell: the matrix
// verdict's cell, or a single workload's verdict; nil when none did.
func verdictOf(v *slo.Verdict, workload string) *slo.Verdict {
	if v == nil {
		return nil
	}
	for _, cv := range v.Workloads {
		if cv.Workload == workload {
			return cv
		}
	}
	if len(v.Workloads) == 0 && v.TargetLoad.Workload == workload {
		return v
	}
	return nil
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sloLines(o *slo.Objective) []sloLine {
	out := []sloLine{}
	if o == nil {
		return out
	}
	for _, s := range o.Checks() {
		// drawn on the chart named as the metric, where it has one; an SLO
		// on another metric is stated in the verdict only
		if m, ok := metrics.LookupMetric(s.Metric); ok && m.Chart {
			out = append(out, sloLine{Chart: s.Metric, Stat: s.Stat, Value: s.Value, Expr: s.Expr})
		}
	}
	return out
}

func buildVerdict(o *slo.Objective, v *slo.Verdict) *verdictData {
	d := &verdictData{Objective: v.Objective, Holds: v.Holds, Failing: v.Failing, Inconclusive: v.Inconclusive, Text: v.Text,
		Reasons: nonNil(v.Reasons), TargetLoad: v.TargetLoad.Label(), Capacity: "none: the lowest load failed",
		Binding: append(nonNil(v.Capacity.FailedSLOs), v.Capacity.Shortfalls...), SLOs: []string{},
		Saturation: "not reached", Workload: v.Workload, Workloads: []verdictData{}}
	if c := v.Capacity; c.Found && c.Load != nil {
		d.Capacity = c.Load.Label()
	}
	if c := v.Capacity; c.BoundedBy == slo.BoundedByInvalid {
		d.Capacity = "INCONCLUSIVE: " + c.Invalid
		if c.Found && c.Load != nil {
			d.Capacity = "at least " + c.Load.Label() + "; INCONCLUSIVE beyond it: " + c.Invalid
		}
	}
	if v.Capacity.FailsAt != nil {
		d.FailsAt = v.Capacity.FailsAt.Label()
	}
	if s := v.Saturation; s.Found && s.Load != nil {
		d.Saturation = s.Load.Label()
	} else if s.Inconclusive != "" {
		d.Saturation = "INCONCLUSIVE: not reached below " + s.Inconclusive
	}
	if o != nil {
		for _, s := range o.Checks() {
			d.SLOs = append(d.SLOs, s.Expr)
		}
	}
	for _, cv := range v.Workloads {
		d.Workloads = append(d.Workloads, *buildVerdict(nil, cv))
	}
	return d
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return slices.Clone(xs)
}
