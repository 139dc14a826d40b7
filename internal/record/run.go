package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// RunSchema names the run metadata file (run.json).
const RunSchema = "servebench.run/v1"

// Run is what a run knows about itself beyond its requests: the target, the
// workload asked for, and the load generator's own figures per point. It is
// written to run.json so that a report can be recomputed with its context.
type Run struct {
	Schema  string `json:"schema"`
	Version string `json:"tool_version"`
	Started string `json:"started"` // RFC 3339 wall-clock time of the epoch
	// Ended is the wall-clock time the run finished and run.json was
	// completed; empty in the run.json written at the start, so a run
	// killed before its end says so.
	Ended  string `json:"ended,omitempty"`
	Target Target `json:"target"`
	// TimeScale is how many times faster than the time it models the target
	// ran (a sped-up simulator); absent or 1 for real servers. Records hold
	// the times the client measured; summaries, verdicts and reports are in
	// model time, the records' times multiplied by it (Record.ModelTime).
	TimeScale float64 `json:"time_scale,omitempty"`
	// Workload as asked for: length distributions and seed. In a workload
	// matrix they list every cell's distribution, " | " between them
	// (MatrixLengths), and Workloads names the cells.
	PromptTokens string `json:"prompt_tokens"`
	OutputTokens string `json:"output_tokens"`
	// Workloads are the cells of a workload matrix, in the order they ran;
	// absent when the run has one workload. A point's Load.Workload is its
	// cell's Label.
	Workloads []WorkloadCell `json:"workloads,omitempty"`
	Seed      uint64         `json:"seed"`
	IgnoreEOS bool           `json:"ignore_eos"`
	// Tokenizer names the counter used to size prompts; PromptTokensSource
	// says whether prompt lengths were checked against the server's own.
	Tokenizer string `json:"tokenizer"`
	// Workload is the workload as configured beyond the two lengths
	// (dataset, sessions, shared prefixes, long context); its fields are
	// those of docs/WORKLOADS.md. Absent for plain synthetic runs.
	Workload any `json:"workload,omitempty"`
	// Trace is the replayed trace and its shape (run --trace); absent
	// otherwise.
	Trace  *Trace        `json:"trace,omitempty"`
	Points []PointClient `json:"points"`
	// SliceS is the length of the slices each point was cut into for the
	// drift check (--slice), in model-time seconds; absent when none.
	SliceS float64 `json:"slice_s,omitempty"`
	// ClientCPUs is how many CPUs the load generator could use
	// (GOMAXPROCS), so that its CPU figures are judged against the machine
	// that ran it, not the one reading them; 0 when not recorded.
	ClientCPUs int `json:"client_cpus,omitempty"`
	// Interrupted is true when the run was stopped by a signal.
	Interrupted bool `json:"interrupted"`
	// Stopped says why the run stopped before its load was done when no
	// signal stopped it (its records file could not be written); absent
	// otherwise.
	Stopped string `json:"stopped,omitempty"`
	// Shard is set when the run is one worker of a sharded run (run
	// --shard): which worker, of how many (docs/DISTRIBUTED.md).
	Shard *RunShard `json:"shard,omitempty"`
	// StartAt is the wall-clock mark (RFC 3339) at which the first point
	// was to start (run --start-at); point k's mark is StartAt plus k
	// times StartEveryS seconds. Absent when the run started at once.
	StartAt     string  `json:"start_at,omitempty"`
	StartEveryS float64 `json:"start_every_s,omitempty"`
	// Workers lists the workers of a run merged from a sharded run's
	// directories (report DIR0 DIR1 ...), of WorkerCount in the run;
	// absent otherwise.
	Workers     []WorkerRun `json:"workers,omitempty"`
	WorkerCount int         `json:"worker_count,omitempty"`
	// Labels are the user's own names for what was measured (--label
	// gpu=H100): what the run history filters on; absent when none.
	Labels map[string]string `json:"labels,omitempty"`
	// Args is the command line the run was started with, credentials
	// redacted, so that a run can be told apart and repeated from its
	// directory; absent when not recorded.
	Args []string `json:"args,omitempty"`
}

// WorkerRun is one worker of a merged sharded run: its directory, how it
// ended, where its first point began against the start mark, and its own
// client figures per point, with spans and starts on the merged clock.
type WorkerRun struct {
	Index    int    `json:"index"`
	Dir      string `json:"dir"`
	Started  string `json:"started"`
	Ended    string `json:"ended,omitempty"`
	Finished bool   `json:"finished"`
	// Interrupted: a signal stopped the worker.
	Interrupted bool `json:"interrupted,omitempty"`
	Records     int  `json:"records"`
	ClientCPUs  int  `json:"client_cpus,omitempty"`
	// StartOffsetMS is how long after the start mark (without one, after
	// the earliest worker's epoch) its first point began, by its own clock.
	StartOffsetMS float64       `json:"start_offset_ms"`
	Points        []PointClient `json:"points"`
}

// RunShard names one worker of a sharded run: worker Index (from 0) of
// Count.
type RunShard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// WorkloadCell is one workload of a workload matrix: its label (the
// Load.Workload of its points) and its two length distributions as given.
type WorkloadCell struct {
	Label        string `json:"label"`
	PromptTokens string `json:"prompt_tokens"`
	OutputTokens string `json:"output_tokens"`
}

// NewWorkloadCell is the cell of the two length distributions, labelled
// by WorkloadLabel.
func NewWorkloadCell(prompt, output string) WorkloadCell {
	return WorkloadCell{Label: WorkloadLabel(prompt, output), PromptTokens: prompt, OutputTokens: output}
}

// MatrixSep separates the distributions of a matrix's cells in run.json's
// prompt_tokens and output_tokens (a comma already separates a
// distribution's parameters).
const MatrixSep = " | "

// WorkloadLabels are the labels of the run's workloads in the order they
// ran: the cells of a matrix, or the one "" of a single workload.
func (r *Run) WorkloadLabels() []string {
	if r == nil || len(r.Workloads) == 0 {
		return []string{""}
	}
	out := make([]string, len(r.Workloads))
	for i, c := range r.Workloads {
		out[i] = c.Label
	}
	return out
}

// Target is the server measured. The API key is never recorded.
type Target struct {
	URL   string `json:"url"`
	API   string `json:"api"`
	Model string `json:"model"`
	// ModelPicked: no model was given, and Model is the only one the
	// server serves.
	ModelPicked bool `json:"model_picked,omitempty"`
	Simulated   bool `json:"simulated"`
	// Server describes what the server said about itself (version, max
	// context), under the Server* keys.
	Server map[ServerKey]string `json:"server,omitempty"`
}

// PointClient pairs a load point with the load generator's own figures.
type PointClient struct {
	Index  int         `json:"index"`
	Load   Load        `json:"load"`
	Client ClientStats `json:"client"`
	// Span is the point's measured window on the records' clock, over
	// which its telemetry is summarised; absent when nothing was measured.
	Span
	// StartedNS is when the point began on the records' clock (after
	// waiting for its start mark, when there is one); StartMark is that
	// mark (RFC 3339). The two place a worker's records on the clock of
	// the other workers of a sharded run.
	StartedNS int64  `json:"started_ns,omitempty"`
	StartMark string `json:"start_mark,omitempty"`
	// Idle: a sharded run's worker had no part of this point (a closed
	// loop with fewer users than workers) and sent nothing.
	Idle bool `json:"idle,omitempty"`
	// Superseded: the point was not valid evidence (the simulator fell
	// behind, the client saturated, ...) and its load was measured again;
	// verdicts judge the load by the later point, summaries show both.
	Superseded bool `json:"superseded,omitempty"`
	// SimClockLostMS is the time the built-in simulator skipped while the
	// point ran, from its start to its end, because its host ran it
	// behind its schedule (model time, ms): read from the simulator
	// itself at both ends, whatever the telemetry sampled (nil for real
	// servers).
	SimClockLostMS *float64 `json:"sim_clock_lost_ms,omitempty"`
}

// Superseded reports whether run.json marks point i as measured again.
func (r *Run) Superseded(i int) bool {
	if r == nil {
		return false
	}
	for _, p := range r.Points {
		if p.Index == i {
			return p.Superseded
		}
	}
	return false
}

// Span is a load point's measured window: from the first send to the last
// end of its measured requests (warm-up and cancelled ones excluded), the
// window its throughputs are taken over (docs/METRICS.md), in ns since the
// run epoch as the records hold them (not model time).
type Span struct {
	StartNS int64 `json:"start_ns,omitempty"`
	EndNS   int64 `json:"end_ns,omitempty"`
}

// Add widens the span to take in r when r is measured.
func (s *Span) Add(r *Record) {
	if r.Phase == PhaseWarmup || (r.Error != nil && r.Error.Class == ClassCancelled) {
		return
	}
	if s.EndNS == 0 || r.SentNS < s.StartNS {
		s.StartNS = r.SentNS
	}
	s.EndNS = max(s.EndNS, r.EndNS)
}

// Empty reports whether no measured request was added.
func (s Span) Empty() bool { return s.EndNS == 0 }

// ClientStats describe the load generator during a point, so that a slow
// result can be told apart from a slow client.
type ClientStats struct {
	// Lag of the dispatcher behind the open-loop schedule (ms): how late each
	// request was handed to its sender, its distribution's median, p90,
	// p99 and maximum. Zero for closed loops (the median and p90 absent).
	LagP50MS float64 `json:"dispatch_lag_p50_ms,omitempty"`
	LagP90MS float64 `json:"dispatch_lag_p90_ms,omitempty"`
	LagP99MS float64 `json:"dispatch_lag_p99_ms"`
	LagMaxMS float64 `json:"dispatch_lag_max_ms"`
	// CPU time the whole process used during the point, and that as a
	// percentage of one core over the point's wall time.
	CPUSeconds   float64 `json:"cpu_seconds"`
	CPUPercent   float64 `json:"cpu_percent_of_one_core"`
	InFlightPeak int     `json:"in_flight_peak"`
	Sent         int     `json:"sent"`
	// Dropped counts open-loop arrivals never sent: the concurrency cap
	// stayed full until the point's last arrival.
	Dropped     int  `json:"dropped,omitempty"`
	Interrupted bool `json:"interrupted"`
}

// WallSeconds is the point's wall time, over which CPUPercent was taken;
// 0 when no CPU time was measured.
func (c ClientStats) WallSeconds() float64 {
	if c.CPUPercent <= 0 {
		return 0
	}
	return 100 * c.CPUSeconds / c.CPUPercent
}

// Scale is the run's time scale, 1 when none was recorded. A run.json
// written before time_scale was recorded has the simulator's scale only
// in target.server; its records are in the same sped-up time.
func (r *Run) Scale() float64 {
	if r == nil {
		return 1
	}
	if r.TimeScale > 0 {
		return r.TimeScale
	}
	if v, err := strconv.ParseFloat(r.Target.Server[ServerTimeScale], 64); err == nil && v > 0 && v < 1e9 {
		return v
	}
	return 1
}

// Slice is the run's slice length (SliceS) as a duration, 0 when none.
func (r *Run) Slice() time.Duration {
	if r == nil || !(r.SliceS > 0) {
		return 0
	}
	return time.Duration(math.Round(r.SliceS * 1e9))
}

// ParseWorkloadLabel splits a WorkloadLabel into its two distributions;
// ok is false for anything else ("" included).
func ParseWorkloadLabel(label string) (prompt, output string, ok bool) {
	in, out, ok := strings.Cut(label, " out=")
	prompt, isIn := strings.CutPrefix(in, "in=")
	if !ok || !isIn || prompt == "" || out == "" {
		return "", "", false
	}
	return prompt, out, true
}

// ErrRunDamaged: a run.json that does not decode. Readers of a run
// directory rebuild the run from its records (Reader.Complete).
var ErrRunDamaged = errors.New("damaged")

// ReadRun reads a run.json file. A file that cannot be read returns the
// os error as it is (errors.Is(err, fs.ErrNotExist) tells a missing one);
// one that does not decode is named in the error, which is ErrRunDamaged.
func ReadRun(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var run Run
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("%s is %w: %w", path, ErrRunDamaged, err)
	}
	return &run, nil
}
