package live

import (
	"fmt"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

// Schema names the state's format (docs/OUTPUT.md, "The live view").
const Schema = "servebench.live/v1"

// Status values of State.Status.
const (
	StatusWaiting  = "waiting"  // listening; no session opened yet
	StatusRunning  = "running"  // a session is sending load
	StatusMeasured = "measured" // the session closed: its summary is final
	StatusEnded    = "ended"    // the command is done; the server closes
)

// Bounds of what the state keeps: the page draws the last ten minutes at
// one tick a second, and lists the last hundred events.
const (
	maxSeries = 600
	maxEvents = 100
)

// State is what GET /state returns, and each server-sent event carries a
// part of: a delta (Full false) holds the scalars, the points that
// changed, and the ticks, events and verdicts that are new since the
// previous event.
type State struct {
	Schema string `json:"schema"`
	// Seq counts the updates; an event's Seq is one more than the last.
	Seq      int     `json:"seq"`
	Full     bool    `json:"full"`
	Status   string  `json:"status"`
	ElapsedS float64 `json:"elapsed_s"`
	// Run is the session's configuration (credentials never included).
	Run      *RunInfo   `json:"run,omitempty"`
	Point    *PointInfo `json:"point,omitempty"`
	Progress Progress   `json:"progress"`
	Requests Counts     `json:"requests"`
	// Points are the figures of every point so far, by the metrics code
	// of summary.json and under its names; once Status is measured they
	// are summary.json's.
	Points    []PointView    `json:"points,omitempty"`
	Series    []Tick         `json:"series,omitempty"`
	Telemetry *TelemetryView `json:"telemetry,omitempty"`
	Events    []Event        `json:"events,omitempty"`
	Verdicts  []VerdictView  `json:"verdicts,omitempty"`
	// Verdict is the objective's verdict, once the session closed.
	Verdict  *FinalVerdict `json:"verdict,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	// Report is the path of the final HTML report on this server, once
	// written.
	Report string `json:"report,omitempty"`
}

// RunInfo is the configuration of the session running.
type RunInfo struct {
	// Number counts sessions: decide measures one per candidate.
	Number       int     `json:"number"`
	URL          string  `json:"url"`
	API          string  `json:"api"`
	Model        string  `json:"model"`
	Simulated    bool    `json:"simulated"`
	TimeScale    float64 `json:"time_scale,omitempty"`
	PromptTokens string  `json:"prompt_tokens"`
	OutputTokens string  `json:"output_tokens"`
	Seed         uint64  `json:"seed"`
	Started      string  `json:"started"`
}

// PointInfo is the point running now, in wall time (what the user waits).
type PointInfo struct {
	Index          int         `json:"index"`
	Load           record.Load `json:"load"`
	Label          string      `json:"label"`
	Requests       int         `json:"requests,omitempty"`
	WarmupRequests int         `json:"warmup_requests,omitempty"`
	DurationS      float64     `json:"duration_s,omitempty"`
	WarmupS        float64     `json:"warmup_s,omitempty"`
	ElapsedS       float64     `json:"elapsed_s"`
	// Done counts the point's records, warm-up included; Remaining is
	// what is left of its requests or of its time (RemainingS).
	Done       int      `json:"done"`
	Remaining  *int     `json:"remaining_requests,omitempty"`
	RemainingS *float64 `json:"remaining_s,omitempty"`
	Running    bool     `json:"running"`
}

// Progress is the whole session's: points done of those planned (0 when
// a capacity search decides), and the share of the run done.
type Progress struct {
	PointsDone    int     `json:"points_done"`
	PointsPlanned int     `json:"points_planned"`
	Fraction      float64 `json:"fraction"`
}

// Counts are the session's requests: done (records written, warm-up
// included), in flight now, failed by class. Dropped counts records the
// live figures missed because the view fell behind (never the files').
type Counts struct {
	Done     int            `json:"done"`
	InFlight int            `json:"in_flight"`
	Failed   int            `json:"failed"`
	Errors   map[string]int `json:"errors"`
	Dropped  int            `json:"dropped,omitempty"`
}

// PointView is a point's figures under summary.json's names
// (points[] there).
type PointView struct {
	Index               int              `json:"index"`
	Load                record.Load      `json:"load"`
	Label               string           `json:"label"`
	Requests            metrics.Requests `json:"requests"`
	TTFT                stats.Dist       `json:"ttft_ms"`
	ITL                 stats.Dist       `json:"itl_ms"`
	E2E                 stats.Dist       `json:"e2e_ms"`
	DecodeTPSReq        stats.Dist       `json:"decode_tps_per_request"`
	OutputTPS           float64          `json:"output_tps"`
	RequestRate         float64          `json:"request_rate"`
	ConcurrencyAchieved float64          `json:"concurrency_achieved"`
	Warnings            []string         `json:"warnings,omitempty"`
	// Final: the point ended (its figures no longer change), or the
	// session closed and these are summary.json's.
	Final bool `json:"final"`
}

func pointView(p *metrics.PointSummary, final bool) PointView {
	return PointView{Index: p.Index, Load: p.Load, Label: p.Load.Label(), Requests: p.Requests,
		TTFT: p.TTFT, ITL: p.ITL, E2E: p.E2E, DecodeTPSReq: p.DecodeTPSReq,
		OutputTPS: p.OutputTPS, RequestRate: p.RequestRate, ConcurrencyAchieved: p.ConcurrencyAchieved,
		Warnings: p.Warnings, Final: final}
}

// Tick is one second of the session: output tokens of the requests that
// ended in it per second, and requests in flight at its end.
type Tick struct {
	TS        float64  `json:"t_s"`
	OutputTPS float64  `json:"output_tps"`
	InFlight  int      `json:"in_flight"`
	Done      int      `json:"done"`
	KVCache   *float64 `json:"kv_cache_usage,omitempty"`
	Running   *float64 `json:"running,omitempty"`
	Waiting   *float64 `json:"waiting,omitempty"`
}

// TelemetryView is the last reading of each source.
type TelemetryView struct {
	Server []ServerReading `json:"server,omitempty"`
	GPUs   []GPUReading    `json:"gpus,omitempty"`
	Host   *HostReading    `json:"host,omitempty"`
	Client *ClientReading  `json:"client,omitempty"`
}

// ServerReading is one engine's last scrape.
type ServerReading struct {
	Instance     string   `json:"instance"`
	Engine       string   `json:"engine"`
	Running      *float64 `json:"running,omitempty"`
	Waiting      *float64 `json:"waiting,omitempty"`
	KVCacheUsage *float64 `json:"kv_cache_usage,omitempty"`
}

// GPUReading is one GPU's last reading.
type GPUReading struct {
	Index            int      `json:"index"`
	Name             string   `json:"name,omitempty"`
	MemoryUsedBytes  *float64 `json:"memory_used_bytes,omitempty"`
	MemoryTotalBytes *float64 `json:"memory_total_bytes,omitempty"`
	Utilization      *float64 `json:"utilization,omitempty"`
	PowerW           *float64 `json:"power_w,omitempty"`
	TemperatureC     *float64 `json:"temperature_c,omitempty"`
}

// HostReading is the host's last reading.
type HostReading struct {
	CPUPercent       *float64 `json:"cpu_percent,omitempty"`
	RAMUsedBytes     *float64 `json:"ram_used_bytes,omitempty"`
	ServerCPUPercent *float64 `json:"server_cpu_percent,omitempty"`
}

// ClientReading is the load generator's own last reading.
type ClientReading struct {
	CPUPercent float64 `json:"cpu_percent"`
	Goroutines int     `json:"goroutines"`
	HeapBytes  float64 `json:"heap_bytes"`
}

// Event is something that happened: a point began or ended, a first
// error of its class, a telemetry event, a warning, a verdict.
type Event struct {
	TS   float64 `json:"t_s"`
	Kind string  `json:"kind"`
	Text string  `json:"text"`
}

// VerdictView is an objective's verdict at one load, as it forms.
type VerdictView struct {
	Run        int      `json:"run"`
	Label      string   `json:"label"`
	Pass       bool     `json:"pass"`
	Valid      bool     `json:"valid"`
	Requests   int      `json:"requests"`
	Good       int      `json:"good_requests"`
	Shortfalls []string `json:"shortfalls,omitempty"`
	Overloaded string   `json:"overloaded,omitempty"`
	NotHeld    string   `json:"not_held,omitempty"`
}

func verdictView(run int, v slo.PointVerdict) VerdictView {
	return VerdictView{Run: run, Label: v.Load.Label(), Pass: v.Pass, Valid: v.Validity.Valid(), Requests: v.Requests,
		Good: v.Good, Shortfalls: v.Shortfalls, Overloaded: v.Overloaded, NotHeld: v.NotHeld}
}

// FinalVerdict is the objective's verdict once judged.
type FinalVerdict struct {
	Conclusion string `json:"conclusion"`
	Holds      bool   `json:"holds"`
	Text       string `json:"text"`
}

// telemetryView keeps the last reading of each source (under tmu).
type telemetryView struct {
	server map[string]ServerReading
	gpus   map[string]GPUReading
	host   *HostReading
	client *ClientReading
}

func (t *telemetryView) add(s *telemetry.Sample) {
	switch {
	case s.Server != nil:
		if t.server == nil {
			t.server = map[string]ServerReading{}
		}
		t.server[s.Instance] = ServerReading{Instance: s.Instance, Engine: s.Server.Engine,
			Running: s.Server.Running, Waiting: s.Server.Waiting, KVCacheUsage: s.Server.KVCacheUsage}
	case s.GPU != nil:
		if t.gpus == nil {
			t.gpus = map[string]GPUReading{}
		}
		g := s.GPU
		t.gpus[fmt.Sprintf("%s/%d", s.Instance, g.Index)] = GPUReading{Index: g.Index, Name: g.Name,
			MemoryUsedBytes: g.MemoryUsedBytes, MemoryTotalBytes: g.MemoryTotalBytes, Utilization: g.Utilization,
			PowerW: g.PowerW, TemperatureC: g.TemperatureC}
	case s.Host != nil:
		t.host = &HostReading{CPUPercent: s.Host.CPUPercent, RAMUsedBytes: s.Host.RAMUsedBytes, ServerCPUPercent: s.Host.ServerCPUPercent}
	case s.Client != nil:
		t.client = &ClientReading{CPUPercent: s.Client.CPUPercent, Goroutines: s.Client.Goroutines, HeapBytes: s.Client.HeapBytes}
	}
}

// view is the readings in a stable order; nil when there are none. The
// server's figures are summed over replicas (KV cache averaged) for the
// tick's series.
func (t *telemetryView) view() (*TelemetryView, Tick) {
	var tick Tick
	if t.server == nil && t.gpus == nil && t.host == nil && t.client == nil {
		return nil, tick
	}
	v := &TelemetryView{Host: t.host, Client: t.client}
	var kv float64
	var nkv int
	for _, k := range sortedKeys(t.server) {
		r := t.server[k]
		v.Server = append(v.Server, r)
		tick.Running = addOpt(tick.Running, r.Running)
		tick.Waiting = addOpt(tick.Waiting, r.Waiting)
		if r.KVCacheUsage != nil {
			kv, nkv = kv+*r.KVCacheUsage, nkv+1
		}
	}
	if nkv > 0 {
		kv /= float64(nkv)
		tick.KVCache = &kv
	}
	for _, k := range sortedKeys(t.gpus) {
		v.GPUs = append(v.GPUs, t.gpus[k])
	}
	return v, tick
}

func addOpt(sum, x *float64) *float64 {
	if x == nil {
		return sum
	}
	v := *x
	if sum != nil {
		v += *sum
	}
	return &v
}

func seconds(d time.Duration) float64 { return d.Seconds() }
