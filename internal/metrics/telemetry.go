package metrics

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// AddTelemetry summarises a run's samples (telemetry.jsonl, with the
// events its records stand for: telemetry.RecordEvent), scanned once in
// time order (telemetry.InTimeOrder), over each point's measured window
// (run.json points[], the records' clock) and each slice into their
// telemetry, in model time, and lists the run's events first among the
// warnings: they may explain every figure below them. Nothing is added
// when there is no sample; an error of the scan is returned with the
// figures of the samples before it added.
func (s *Summary) AddTelemetry(samples telemetry.Scan) error {
	if s.Run == nil {
		return nil
	}
	scale := s.Run.Scale()
	// the windows: each point's measured span, then each slice of each
	// point, in the order AddSliceTelemetry asks for them
	var windows [][2]int64
	var spans []int // the point of each span's window
	for i := range s.Points {
		for _, pc := range s.Run.Points {
			if pc.Index == s.Points[i].Index && !pc.Span.Empty() {
				windows, spans = append(windows, [2]int64{pc.StartNS, pc.EndNS}), append(spans, i)
			}
		}
	}
	for i := range s.Points {
		for _, sl := range s.Points[i].Slices {
			// slices are in model time; samples on the run clock
			from, to := sl.Span()
			windows = append(windows, [2]int64{int64(float64(from) / scale), int64(float64(to) / scale)})
		}
	}
	sum := telemetry.NewSummaries(scale, windows...)
	n := 0
	err := samples(func(smp *telemetry.Sample) { sum.Add(smp); n++ })
	if n == 0 {
		return err
	}
	defer s.qualify()
	for w, i := range spans {
		p := &s.Points[i]
		p.Telemetry = sum.Point(w, p.OutputTokensMean*float64(p.Requests.Completed))
		if why := besideServer(p.Telemetry, p.Client, s.Run.ClientCPUs); why != "" {
			p.Warnings = append(p.Warnings, why)
		}
		if why := stolen(p.Telemetry); why != "" {
			p.Warnings = append(p.Warnings, why)
		}
		if why := preempted(p.Telemetry); why != "" {
			// first: it explains the point's latencies and speeds
			p.Warnings = append([]string{why}, p.Warnings...)
		}
	}
	next := len(spans)
	s.AddSliceTelemetry(func(int, int64, int64) *telemetry.Point {
		next++
		return sum.Point(next-1, 0)
	})
	if lines := sum.EventLines(); lines != nil {
		s.Warnings = append(lines, s.Warnings...)
	}
	s.warnSimBehind()
	return err
}

// Thresholds of the warning that the client took CPU from a server on its
// own machine (besideServer). On two cores shared with a server that
// streams as fast as it can, the client at about one core beside the
// server's one kept the machine busy, and the same server sent a fifth
// more with the client on one core of the two (docs/PERFORMANCE.md); a
// GPU server's host, or a CPU engine whose client waits on it, is far from
// busy or leaves the client a small share.
const (
	besideBusyHostPercent = 90  // the machine's CPUs, % of all, mean over the point
	besideClientShare     = 0.1 // the client's CPU against the server's
	besideClientPercent   = 10  // the client's CPU, % of one core
)

// besideServer is a point's warning when a server on this machine (its
// process followed) shared CPUs that were busy with a client using a
// share of what the server used, else "". cpus is the client's
// (run.json client_cpus): on one already, --cpus is no advice.
func besideServer(t *telemetry.Point, c *record.ClientStats, cpus int) string {
	if t == nil || t.Host == nil || t.Host.HostCPUPercentMean == nil || t.Host.ServerCPUPercentMean == nil || c == nil {
		return ""
	}
	host, server, client := *t.Host.HostCPUPercentMean, *t.Host.ServerCPUPercentMean, c.CPUPercent
	if host < besideBusyHostPercent || client < besideClientPercent || client < besideClientShare*server || c.WallSeconds() < minClientCPUWindowS {
		return ""
	}
	advice := "run the client on another machine, or on fewer cores with --cpus"
	if cpus == 1 {
		advice = "run the client on another machine"
	}
	return fmt.Sprintf("%s: its CPUs were %.0f%% busy, the server's process used %.0f%% of one core and the client %.0f%%: the server had less CPU than it would alone, so these figures are of the server beside this client (%s)",
		BesideServerPrefix, host, server, client, advice)
}

// BesideServerPrefix begins the warning that the client shared a busy
// machine with the server it measured.
const BesideServerPrefix = "the client and the server shared this machine"

// stealWarnPercent is the hypervisor's mean share of the host's CPU time
// over a point (steal) at which the point warns. A quiet virtual machine
// here showed 0.5–0.7%, at most 3% in a second (docs/notes/performance-history.md); at
// 5% a CPU-bound server or client has lost a twentieth of its CPU, half
// the tolerance a throughput prediction is judged by, in an amount that
// other tenants decide and that changes from minute to minute.
const stealWarnPercent = 5

// stolen is a point's warning when the hypervisor took stealWarnPercent
// or more of the host's CPU time over the point (steal), else "".
func stolen(t *telemetry.Point) string {
	if t == nil || t.Host == nil || t.Host.StealPercentMean == nil || *t.Host.StealPercentMean < stealWarnPercent {
		return ""
	}
	return fmt.Sprintf("%s: the hypervisor gave %.0f%% of the host's CPU time to other guests (steal, host telemetry): "+
		"every process on it, a server's or the client's, had less CPU than the machine has, by an amount other tenants decide; "+
		"a dedicated or quieter host will measure differently", StealPrefix, *t.Host.StealPercentMean)
}

// PreemptedPrefix begins the warning that the server preempted sequences.
const PreemptedPrefix = "the server preempted running requests"

// preempted is a point's warning when the server's preemption counter
// (vLLM num_preemptions_total, SGLang's retracted requests, the
// simulator's) rose over the point, with the cause, else "".
func preempted(t *telemetry.Point) string {
	if t == nil || t.Server == nil || t.Server.Preemptions == nil || *t.Server.Preemptions <= 0 {
		return ""
	}
	kv := ""
	if u := t.Server.KVCacheUsage; u != nil {
		kv = fmt.Sprintf(" (peak %.0f%% full)", 100*u.Max)
	}
	times := "times"
	if *t.Server.Preemptions == 1 {
		times = "time"
	}
	return fmt.Sprintf("%s %.0f %s: its KV cache ran out%s, so it evicted their KV cache and recomputed them later; "+
		"TTFT, E2E and decode speed here include that recomputation, and the load is past what its KV cache holds "+
		"(fewer users or shorter contexts, or more KV cache: more GPU memory, an fp8 KV cache, more GPUs)",
		PreemptedPrefix, *t.Server.Preemptions, times, kv)
}

// StealPrefix begins the warning that the hypervisor took a share of the
// host's CPUs.
const StealPrefix = "the host's CPUs were shared with other virtual machines"

// SimBehindPrefix begins the run warning that the built-in simulator fell
// behind its clock: like the client's saturation, it is said above the
// table, since every figure of those points is the host's, not the model's.
const SimBehindPrefix = "the simulator fell behind its clock"

// simLostWarnFraction is the share of a point's time the simulator may
// skip unremarked. The figures move by about that share (the simulated
// GPU served nothing then): on a two-core machine beside two busy
// processes the default sweep lost 2–3.4% and its throughput fell 1–5%;
// past 5% they differ from the model's by more than a run's own noise.
const simLostWarnFraction = 0.05

// simBehind is a point's warning when the built-in simulator skipped at
// least simLostWarnFraction of the point's model time window (ms), else
// "": lost (ms) as simLost gives it.
func simBehind(lost, window float64, known bool) string {
	if !known || window <= 0 || lost < simLostWarnFraction*window {
		return ""
	}
	return fmt.Sprintf("%s %.0f ms of model time (%.1f%% of the point) because its host ran it behind its schedule: latencies here are longer, and throughput lower, than the model's",
		simSkippedPrefix, lost, 100*lost/window)
}

// simSkippedPrefix begins a point's warning that the simulator fell
// behind (simBehind).
const simSkippedPrefix = "the simulator skipped"

// warnSimBehind adds each point's warning that the simulator fell behind
// (simBehind), and the run's above the table naming the loads, in place
// of any said before: the summary says it from run.json's readings, and
// again once telemetry is added.
func (s *Summary) warnSimBehind() {
	var behind []string
	for i := range s.Points {
		p := &s.Points[i]
		p.Warnings = slices.DeleteFunc(p.Warnings, func(w string) bool { return strings.HasPrefix(w, simSkippedPrefix) })
		if why := simBehind(s.simLost(p)); why != "" {
			p.Warnings = append(p.Warnings, why)
			behind = append(behind, p.Load.Label())
		}
	}
	s.Warnings = slices.DeleteFunc(s.Warnings, func(w string) bool { return strings.HasPrefix(w, SimBehindPrefix) })
	if len(behind) > 0 {
		s.Warnings = append([]string{fmt.Sprintf("%s at %s: the host could not run the simulated server at time scale %g, so its figures there are slower than the model it simulates (lower time_scale with --sim-config, or run on a quieter machine)",
			SimBehindPrefix, strings.Join(behind, "; "), s.Run.Scale())}, s.Warnings...)
	}
}

// Sources of a point's server-measured prefill throughput (ServerPrefillTPS).
const (
	// PrefillFromTimings: the p50 of each request's prompt_eval_count over
	// prompt_eval_duration, from the server's own timings (Ollama's final
	// chunk, llama.cpp's timings).
	PrefillFromTimings = "the server's per-request timings (prompt_eval_duration), p50"
	// PrefillFromHistograms: the prompt tokens of the requests finished in
	// the point over their prefill time, from the server's metrics
	// (vllm:request_prompt_tokens and vllm:request_prefill_time_seconds;
	// the built-in simulator exports both).
	PrefillFromHistograms = "the server's metrics (vllm:request_prompt_tokens ÷ vllm:request_prefill_time_seconds, requests finished in the point)"
)

// ServerPrefillTPS is the point's prefill throughput per request as the
// server measured it, queueing and request overhead excluded, and its
// source: the per-request timings where the server reported them, else
// its prefill-time histogram over the point; ok false when it told
// neither. Prompt tokens ÷ TTFT (PrefillTPS) is the client's view.
func (p *PointSummary) ServerPrefillTPS() (tps float64, source string, ok bool) {
	if v, ok := p.ServerPrefill.Get("p50"); ok {
		return v, PrefillFromTimings, true
	}
	if t := p.Telemetry; t != nil && t.Server != nil && t.Server.PrefillTPS != nil {
		return *t.Server.PrefillTPS, PrefillFromHistograms, true
	}
	return 0, "", false
}
