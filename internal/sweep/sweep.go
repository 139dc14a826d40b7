// Package sweep owns a server-configuration sweep's result, sweep.json:
// each configuration's start-up, run and failure, the Pareto frontier of
// their load points and the recommendation.
package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
)

// Schema names sweep.json's format (docs/OUTPUT.md).
const Schema = "servebench.sweep/v1"

// File is what a sweep found: sweep.json.
type File struct {
	Schema string `json:"schema"`
	// Serve and Env are the command as given, placeholders unexpanded.
	Serve       string         `json:"serve"`
	Env         []string       `json:"env"`
	Params      []launch.Param `json:"params"`
	StartupOnly bool           `json:"startup_only,omitempty"`
	// PlanConfig is --plan-config, the model each configuration was
	// planned from (Config.Plan).
	PlanConfig string   `json:"plan_config,omitempty"`
	Configs    []Config `json:"configs"`
	// Pareto are the load points no other beats on per-user decode speed
	// and aggregate output throughput (per GPU when known).
	Pareto []ParetoPoint `json:"pareto"`
	// With an objective: the recommendation (slo.Decide) and why.
	Objective    string   `json:"objective,omitempty"`
	Recommended  string   `json:"recommended,omitempty"`
	Why          string   `json:"why,omitempty"`
	Inconclusive []string `json:"inconclusive,omitempty"`
}

// Config is one configuration in sweep.json.
type Config struct {
	Name    string            `json:"name"`
	Params  map[string]string `json:"params"`
	Command []string          `json:"command"`
	Env     []string          `json:"env,omitempty"`
	Port    int               `json:"port,omitempty"`
	PID     int               `json:"pid,omitempty"`
	GPUs    float64           `json:"gpus,omitempty"`
	Startup *Startup          `json:"startup"`
	// Startups and StartupSummary: every cold start of --startup-only.
	Startups       []Startup       `json:"startups,omitempty"`
	StartupSummary *StartupSummary `json:"startup_summary,omitempty"`
	Stop           *launch.Stopped `json:"stop"`
	Error          *string         `json:"error"`
	LogTail        string          `json:"log_tail,omitempty"`
	RunDir         string          `json:"run_dir"`
	// From its run.
	Capacity      *record.Load `json:"capacity"`
	Saturation    *record.Load `json:"saturation"`
	PeakOutputTPS *float64     `json:"peak_output_tps"`
	// DecodeAtCapacity is the per-user decode speed (p50, and p5: the
	// speed 95% of users reached) at capacity, else at saturation.
	DecodeAtCapacity   *SpeedAt `json:"decode_tps_per_user_at_capacity"`
	PeakServerRSSBytes *float64 `json:"peak_server_rss_bytes"`
	PeakGPUMemoryBytes *float64 `json:"peak_gpu_memory_bytes"`
	Meets              *bool    `json:"meets_objective,omitempty"`
	Conclusion         string   `json:"conclusion,omitempty"`
	Points             []Point  `json:"points"`
	// Plan is the configuration's plan beside its measurement, with
	// --plan-config.
	Plan *Plan `json:"plan,omitempty"`
}

// SpeedAt is the per-user decode speed at one load.
type SpeedAt struct {
	Load record.Load `json:"load"`
	P50  *float64    `json:"p50"`
	P95  *float64    `json:"p95"`
}

// Point is a load point of a configuration, in the frontier's terms.
type Point struct {
	Load      record.Load `json:"load"`
	OutputTPS float64     `json:"output_tps"`
	// OutputTPSPerGPU is OutputTPS over the configuration's GPUs (absent
	// when they are not known).
	OutputTPSPerGPU *float64 `json:"output_tps_per_gpu,omitempty"`
	// DecodeP50 and DecodeP95: per-user decode speed, decode_tps_per_request
	// p50 and p5 (the speed 95% of users reached, as `speed p95` reads).
	DecodeP50 *float64 `json:"decode_tps_per_user_p50"`
	DecodeP95 *float64 `json:"decode_tps_per_user_p95"`
	TTFTP50   *float64 `json:"ttft_ms_p50"`
	ErrorRate float64  `json:"error_rate"`
}

// ParetoPoint is a load point on a frontier; On names the frontiers it is
// on ("p50", "p95": per-user speed at that percentile).
type ParetoPoint struct {
	Config string      `json:"config"`
	Load   record.Load `json:"load"`
	On     []string    `json:"on"`
	// X is the aggregate throughput the frontier was drawn on: output
	// tok/s, per GPU when every configuration's GPUs are known.
	X        float64  `json:"output_tps"`
	PerGPU   bool     `json:"per_gpu"`
	SpeedP50 *float64 `json:"decode_tps_per_user_p50"`
	SpeedP95 *float64 `json:"decode_tps_per_user_p95"`
}

// StartupSummary is the distribution of --startup-only's cold starts.
type StartupSummary struct {
	N            int        `json:"n"`
	ReadyS       *MinMedMax `json:"ready_s"`
	FirstTokenS  *MinMedMax `json:"first_token_s"`
	ModelListedS *MinMedMax `json:"model_listed_s"`
}

// MinMedMax is a small sample's range and middle.
type MinMedMax struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Outcome is what a sweep did with one configuration.
type Outcome struct {
	Config launch.Config
	// Args and Env are the command as started, redacted.
	Args, Env []string
	// Port and PID: where it listened, and its process (its group's id).
	Port, PID int
	// Startups are its start-ups (one but with --startup-only); nil when
	// none was ready.
	Startups []Startup
	Stopped  *launch.Stopped
	// Error is why it failed ("" when it did not); LogTail the end of its
	// server's log then.
	Error, LogTail string
	Dir            string
	// From its run, when one ran: its summary, its verdict under the
	// objective, what the server said about itself.
	Summary *metrics.Summary
	Verdict *slo.Verdict
	Server  map[record.ServerKey]string
	// Plan is how to plan it (nil: no plan asked for).
	Plan *PlanSpec
}

// Startup is how long a server took to become usable, in seconds from
// its process's start (docs/SWEEP.md): its port accepting, its model
// listed, the first token of its first request, that request answered.
// A stage not reached is nil.
type Startup struct {
	PortOpenS    *float64 `json:"port_open_s"`
	ModelListedS *float64 `json:"model_listed_s"`
	FirstTokenS  *float64 `json:"first_token_s"`
	ReadyS       *float64 `json:"ready_s"`
	// ColdTTFTS is the first request's own time to first token: the cold
	// request, which may load the model (Ollama) or warm its kernels.
	ColdTTFTS *float64 `json:"cold_ttft_s"`
}

// Spec is the sweep as given: the command, placeholders unexpanded, and
// its parameters.
type Spec struct {
	Serve       string
	Env         []string
	Params      []launch.Param
	StartupOnly bool
	PlanConfig  string
}

// Summarize makes sweep.json of a sweep's outcomes. gpus gives each
// configuration's GPU count (nil or 0: unknown); o is the objective, when
// the configurations were judged.
func Summarize(sp Spec, outs []Outcome, gpus func(launch.Config) float64, o *slo.Objective) *File {
	f := &File{Schema: Schema, Serve: sp.Serve, Env: sp.Env, Params: sp.Params, StartupOnly: sp.StartupOnly,
		PlanConfig: sp.PlanConfig, Configs: []Config{}, Pareto: []ParetoPoint{}}
	if f.Env == nil {
		f.Env = []string{}
	}
	if f.Params == nil {
		f.Params = []launch.Param{}
	}
	for _, x := range outs {
		c := configOf(x)
		if gpus != nil {
			c.GPUs = gpus(x.Config)
		}
		c.perGPU()
		if x.Plan != nil {
			c.Plan = PlanOf(x.Plan, &c)
		}
		f.Configs = append(f.Configs, c)
	}
	f.Pareto = paretoOf(f.Configs)
	if o != nil {
		verdicts := make([]*slo.Verdict, len(outs))
		servers := make([]map[record.ServerKey]string, len(outs))
		for i, x := range outs {
			verdicts[i], servers[i] = x.Verdict, x.Server
		}
		f.decide(o, verdicts, servers)
	}
	return f
}

func configOf(r Outcome) Config {
	c := Config{Name: r.Config.Name(), Params: r.Config.Values, Command: r.Args, Env: r.Env, Port: r.Port, PID: r.PID,
		Stop: r.Stopped, LogTail: r.LogTail, RunDir: r.Dir, Points: []Point{}}
	if len(r.Startups) > 0 {
		c.Startup = &r.Startups[0]
	}
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	if r.Error != "" {
		e := r.Error
		c.Error = &e
	}
	if len(r.Startups) > 1 {
		c.Startups, c.StartupSummary = r.Startups, summarizeStartups(r.Startups)
	}
	if r.Summary == nil {
		return c
	}
	c.fromSummary(r.Summary)
	c.Saturation = summarySaturation(r.Summary.Points)
	c.judge(r.Verdict)
	return c
}

// judge sets what a verdict says of a configuration (v nil: none): its
// capacity, its saturation where the verdict found one, whether it meets
// the objective, and its per-user decode speed at its capacity, else at
// its saturation.
func (c *Config) judge(v *slo.Verdict) {
	c.Capacity, c.Meets, c.Conclusion, c.DecodeAtCapacity = nil, nil, "", nil
	at := c.Saturation // the run's, found from its points
	if v != nil {
		if v.Capacity.Found {
			c.Capacity, at = v.Capacity.Load, v.Capacity.Load
		}
		if v.Saturation.Found {
			c.Saturation = v.Saturation.Load
		}
		holds := v.Holds
		c.Meets, c.Conclusion = &holds, v.Conclusion
	}
	if at == nil {
		return
	}
	for _, p := range c.Points {
		if p.Load == *at {
			c.DecodeAtCapacity = &SpeedAt{Load: p.Load, P50: p.DecodeP50, P95: p.DecodeP95}
		}
	}
}

// Judged is a configuration's run judged again: the verdict, and what its
// server said about itself (run.json), which the recommendation weighs.
type Judged struct {
	Verdict *slo.Verdict
	Server  map[record.ServerKey]string
}

// Rejudge is f as the sweep would have written it under objective o:
// each configuration's capacity, conclusion and speed at capacity from
// its run's verdict in judged (by name; a configuration not there was
// not measured), and the recommendation made again. f is left as it is.
func (f *File) Rejudge(o *slo.Objective, judged map[string]Judged) *File {
	g := *f
	g.Configs = slices.Clone(f.Configs)
	g.Objective, g.Recommended, g.Why, g.Inconclusive = "", "", "", nil
	verdicts := make([]*slo.Verdict, len(g.Configs))
	servers := make([]map[record.ServerKey]string, len(g.Configs))
	for i := range g.Configs {
		c := &g.Configs[i]
		j := judged[c.Name]
		c.judge(j.Verdict)
		if c.Plan != nil && c.Plan.Compare != nil {
			p := *c.Plan // the plan's speed at the new capacity
			p.decodeAt(c)
			c.Plan = &p
		}
		verdicts[i], servers[i] = j.Verdict, j.Server
	}
	g.decide(o, verdicts, servers)
	return &g
}

// fromSummary takes the points, the peak throughput and the peak memory
// of a configuration's run.
func (c *Config) fromSummary(sum *metrics.Summary) {
	for _, p := range sum.Points {
		c.Points = append(c.Points, Point{Load: p.Load, OutputTPS: p.OutputTPS, DecodeP50: p.DecodeTPSReq.P50,
			DecodeP95: p.DecodeTPSReq.P5, TTFTP50: p.TTFT.P50, ErrorRate: p.ErrorRate})
		if !p.AllFailed && (c.PeakOutputTPS == nil || p.OutputTPS > *c.PeakOutputTPS) {
			v := p.OutputTPS
			c.PeakOutputTPS = &v
		}
		if t := p.Telemetry; t != nil {
			if t.Host != nil {
				c.PeakServerRSSBytes = maxPtr(c.PeakServerRSSBytes, t.Host.ServerRSSBytesMax)
			}
			var gpu *float64
			for _, g := range t.GPUs {
				if g.MemoryUsedBytesMax != nil {
					s := *g.MemoryUsedBytesMax
					if gpu != nil {
						s += *gpu
					}
					gpu = &s
				}
			}
			c.PeakGPUMemoryBytes = maxPtr(c.PeakGPUMemoryBytes, gpu)
		}
	}
}

func (c *Config) perGPU() {
	if c.GPUs <= 0 {
		return
	}
	for i := range c.Points {
		v := c.Points[i].OutputTPS / c.GPUs
		c.Points[i].OutputTPSPerGPU = &v
	}
}

func maxPtr(a, b *float64) *float64 {
	if b == nil || a != nil && *a >= *b {
		return a
	}
	v := *b
	return &v
}

// summarySaturation is the knee of a run's loads (stats.Saturation, as a
// verdict finds it), for a run judged by no objective; nil when none.
func summarySaturation(pts []metrics.PointSummary) *record.Load {
	var ok []metrics.PointSummary
	for _, p := range pts {
		if !p.AllFailed && p.LoadHeld {
			ok = append(ok, p)
		}
	}
	slices.SortStableFunc(ok, func(a, b metrics.PointSummary) int { return cmp.Compare(slo.LoadValue(a.Load), slo.LoadValue(b.Load)) })
	xs, ys, ls := make([]float64, len(ok)), make([]float64, len(ok)), make([]float64, len(ok))
	for i, p := range ok {
		xs[i], ys[i], ls[i] = slo.LoadValue(p.Load), p.OutputTPS, math.NaN()
		if p.E2E.Mean != nil {
			ls[i] = *p.E2E.Mean
		}
	}
	i, found := stats.Saturation(xs, ys, ls, stats.DefaultSaturationGain)
	if !found {
		return nil
	}
	l := ok[i].Load
	return &l
}

// paretoOf is the frontier over every configuration's load points, for
// per-user speed p50 and, separately, p95; throughput per GPU when every
// measured configuration's GPUs are known.
func paretoOf(cs []Config) []ParetoPoint {
	type ref struct{ c, p int }
	var refs []ref
	perGPU := true
	for i, c := range cs {
		for j, p := range c.Points {
			if p.ErrorRate < 1 {
				refs = append(refs, ref{i, j})
				perGPU = perGPU && p.OutputTPSPerGPU != nil
			}
		}
	}
	xs := make([]float64, len(refs))
	y50, y95 := make([]float64, len(refs)), make([]float64, len(refs))
	for k, r := range refs {
		p := cs[r.c].Points[r.p]
		xs[k], y50[k], y95[k] = p.OutputTPS, orNaN(p.DecodeP50), orNaN(p.DecodeP95)
		if perGPU {
			xs[k] = *p.OutputTPSPerGPU
		}
	}
	on := map[int][]string{}
	for _, k := range stats.Pareto(xs, y50) {
		on[k] = append(on[k], "p50")
	}
	for _, k := range stats.Pareto(xs, y95) {
		on[k] = append(on[k], "p95")
	}
	out := []ParetoPoint{}
	for k, r := range refs {
		if len(on[k]) == 0 {
			continue
		}
		p := cs[r.c].Points[r.p]
		out = append(out, ParetoPoint{Config: cs[r.c].Name, Load: p.Load, On: on[k], X: xs[k], PerGPU: perGPU,
			SpeedP50: p.DecodeP50, SpeedP95: p.DecodeP95})
	}
	slices.SortStableFunc(out, func(a, b ParetoPoint) int { return cmp.Compare(a.X, b.X) })
	return out
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Failed is how many configurations failed (their Error set).
func (f *File) Failed() int {
	n := 0
	for _, c := range f.Configs {
		if c.Error != nil {
			n++
		}
	}
	return n
}

// decide recommends a configuration as decide does (slo.Decide): each
// configuration is a candidate labelled with its parameters and GPUs,
// with its verdict and its server's description (by index).
func (f *File) decide(o *slo.Objective, verdicts []*slo.Verdict, servers []map[record.ServerKey]string) {
	var outs []slo.Outcome
	memory := f.peakMemory()
	for i, c := range f.Configs {
		labels := maps.Clone(c.Params)
		if labels == nil {
			labels = map[string]string{}
		}
		if c.GPUs > 0 {
			labels["gpus"] = strconv.FormatFloat(c.GPUs, 'g', -1, 64)
		}
		x := slo.Outcome{Candidate: slo.Candidate{Name: c.Name, Labels: labels}, MemoryBytes: memory(c), Order: i}
		if c.Error != nil {
			x.Error = *c.Error
		}
		x.Server = servers[i]
		if v := verdicts[i]; v != nil {
			x.Verdict, x.Binding = v, v.Capacity.FailedSLOs
		}
		if x.Error == "" && x.Verdict == nil {
			x.Error = "not measured"
		}
		outs = append(outs, x)
	}
	d := slo.Decide(o, outs)
	f.Objective, f.Recommended, f.Why = o.Name, d.Recommended, d.Why
	if len(d.Inconclusive) > 0 {
		f.Inconclusive = d.Inconclusive
	}
}

// peakMemory is the memory a configuration held at its peak, as the
// recommendation ranks it: GPU memory when the sweep has it for every
// configuration measured, else the server's RSS when it has that for
// every one, else none (0): a rank over some configurations' peaks would
// favour those that were not measured.
func (f *File) peakMemory() func(Config) float64 {
	all := func(get func(Config) *float64) bool {
		n := 0
		for _, c := range f.Configs {
			if c.Error != nil {
				continue
			}
			if get(c) == nil {
				return false
			}
			n++
		}
		return n > 0
	}
	gpu := func(c Config) *float64 { return c.PeakGPUMemoryBytes }
	rss := func(c Config) *float64 { return c.PeakServerRSSBytes }
	for _, get := range []func(Config) *float64{gpu, rss} {
		if all(get) {
			return func(c Config) float64 {
				if v := get(c); v != nil {
					return *v
				}
				return 0
			}
		}
	}
	return func(Config) float64 { return 0 }
}

// summarizeStartups is the range and median of each start-up stage.
func summarizeStartups(sts []Startup) *StartupSummary {
	pick := func(get func(Startup) *float64) *MinMedMax {
		var xs []float64
		for _, s := range sts {
			if v := get(s); v != nil {
				xs = append(xs, *v)
			}
		}
		if len(xs) == 0 {
			return nil
		}
		slices.Sort(xs)
		med := xs[len(xs)/2]
		if len(xs)%2 == 0 {
			med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
		}
		return &MinMedMax{Min: xs[0], Median: med, Max: xs[len(xs)-1]}
	}
	return &StartupSummary{N: len(sts), ReadyS: pick(func(s Startup) *float64 { return s.ReadyS }),
		FirstTokenS:  pick(func(s Startup) *float64 { return s.FirstTokenS }),
		ModelListedS: pick(func(s Startup) *float64 { return s.ModelListedS })}
}

// FileName is the sweep's result in its directory.
const FileName = "sweep.json"

// Write writes f as dir/sweep.json.
func Write(dir string, f *File) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FileName), append(b, '\n'), 0o644)
}

// In reports whether dir is a sweep's directory: it holds sweep.json.
func In(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, FileName))
	return err == nil && st.Mode().IsRegular()
}

// Read reads dir/sweep.json. Each configuration's run_dir, written as the
// sweep's --out/NAME from where the sweep ran, is read as dir/NAME, so a
// sweep read from another directory, or moved, still finds its runs.
func Read(dir string) (*File, error) {
	path := filepath.Join(dir, FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, f.Schema, Schema)
	}
	for i := range f.Configs {
		c := &f.Configs[i]
		if c.RunDir == "" {
			continue
		}
		if !filepath.IsLocal(c.Name) {
			return nil, fmt.Errorf("%s: configuration name %q is not a directory inside the sweep's", path, c.Name)
		}
		c.RunDir = filepath.Join(dir, c.Name)
	}
	return &f, nil
}
