// Package metrics turns records into per-load-point summaries: latency
// distributions, throughputs, achieved concurrency, errors and workload
// warnings. Every field is defined in docs/METRICS.md; the computation is a
// pure function of the records, so any summary can be recomputed later.
// It returns values; rendering them is report's.
package metrics

import (
	"math"
	"sort"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

// Requests counts a load point's measured requests by outcome.
type Requests struct {
	Completed int            `json:"completed"`
	Failed    int            `json:"failed"`
	Cancelled int            `json:"cancelled"`
	Errors    map[string]int `json:"errors"`
	// ErrorSamples holds one message per error class: that of the
	// class's first request (lowest id), as recorded (credentials redacted).
	ErrorSamples map[string]string `json:"error_samples"`
}

// Warmup summarises the requests excluded from the steady state: the
// cold-start figures.
type Warmup struct {
	Count        int        `json:"count"`
	Failed       int        `json:"failed"`
	FirstTTFTMS  *float64   `json:"first_ttft_ms"`
	TTFT         stats.Dist `json:"ttft_ms"`
	E2E          stats.Dist `json:"e2e_ms"`
	DecodeTPSReq stats.Dist `json:"decode_tps_per_request"`
}

// PointSummary is the summary of one load point. JSON names are the contract of
// summary.json (docs/OUTPUT.md): add fields freely, rename none.
type PointSummary struct {
	Index    int         `json:"index"`
	Load     record.Load `json:"load"`
	API      string      `json:"api,omitempty"`
	Model    string      `json:"model,omitempty"`
	Requests Requests    `json:"requests"`

	TTFT          stats.Dist `json:"ttft_ms"`
	TTFTSched     stats.Dist `json:"ttft_sched_ms"`
	TTFO          stats.Dist `json:"ttfo_ms"`
	ITL           stats.Dist `json:"itl_ms"`
	TPOT          stats.Dist `json:"tpot_ms"`
	E2E           stats.Dist `json:"e2e_ms"`
	E2ESched      stats.Dist `json:"e2e_sched_ms"`
	Queue         stats.Dist `json:"queue_ms"`
	DecodeTPSReq  stats.Dist `json:"decode_tps_per_request"`
	PrefillTPS    stats.Dist `json:"prefill_tps_per_request"`
	ServerPrefill stats.Dist `json:"server_prefill_tps"`
	ServerDecode  stats.Dist `json:"server_decode_tps"`
	PromptTokens  stats.Dist `json:"prompt_tokens"`
	OutputTokens  stats.Dist `json:"output_tokens"`

	OutputTPS           float64 `json:"output_tps"`
	InputTPS            float64 `json:"input_tps"`
	RequestRate         float64 `json:"request_rate"`
	RequestsPerMinute   float64 `json:"requests_per_minute"`
	OfferedRate         float64 `json:"offered_rate,omitempty"`
	ConcurrencyAchieved float64 `json:"concurrency_achieved"`
	ConcurrencyMax      int     `json:"concurrency_max"`
	// Achieved load (docs/METRICS.md, "Achieved load"): the share of the
	// window a closed loop held at least 90% of its users in flight, the
	// rate an open loop sent at, and whether the point held its nominal
	// load; a point that did not is never capacity evidence.
	ConcurrencyHeldShare float64 `json:"concurrency_held_share,omitempty"`
	AchievedRate         float64 `json:"achieved_rate,omitempty"`
	LoadHeld             bool    `json:"load_held"`
	// Overload is set when an open loop's arrivals outpaced its
	// completions, with the evidence.
	Overload  *Overload `json:"overload,omitempty"`
	ErrorRate float64   `json:"error_rate"`
	// AllFailed is true when every measured request failed: nothing
	// about the server's speed was measured at this point.
	AllFailed        bool    `json:"all_failed"`
	DurationS        float64 `json:"duration_s"`
	PromptTokensMean float64 `json:"prompt_tokens_mean"`
	OutputTokensMean float64 `json:"output_tokens_mean"`

	OutputShortfall int     `json:"output_shortfall_requests"`
	PromptMismatch  int     `json:"prompt_mismatch_requests"`
	Warmup          *Warmup `json:"warmup,omitempty"`
	// Client is the load generator's own figures (from run.json).
	Client *record.ClientStats `json:"client,omitempty"`
	// Slices and Drift: the point's window in slices of --slice, and
	// whether throughput or p95 TTFT trended across them (docs/METRICS.md,
	// "Slices and drift"); absent without --slice.
	Slices []Slice `json:"slices,omitempty"`
	Drift  *Drift  `json:"drift,omitempty"`
	// Telemetry is what the server, GPUs, host and client showed over the
	// point's measured window (telemetry.jsonl); absent when nothing was
	// sampled.
	Telemetry *telemetry.Point `json:"telemetry,omitempty"`
	// PrefixCache is the hit rate and TTFT by hit and miss from the
	// cached-token counts the server reported (prefix.go); absent when
	// no request's server reported one.
	PrefixCache *PrefixCache `json:"prefix_cache,omitempty"`
	// Validity says whether the point's figures can carry a conclusion,
	// and why not (docs/METRICS.md, "Validity").
	Validity Validity `json:"validity"`
	// Trace is a replayed trace's point as achieved (run --trace); absent
	// otherwise.
	Trace *Trace `json:"trace,omitempty"`

	Warnings []string `json:"warnings"`
}

// Aggregator collects records and produces per-point summaries. The zero
// value is ready to use; Add may be called in any order of points.
type Aggregator struct {
	// Slice, when positive, cuts each point's window into slices of this
	// much model time (points[].slices, points[].drift); set it before
	// the first Add, since slicing keeps every request's chunks.
	Slice time.Duration
	// Ordered: records come in the order their requests ended, as a run
	// hands them over and writes them. A closed loop's requests in flight
	// are then swept as they come (inflight.go) instead of kept to the end.
	Ordered bool
	points  map[int]*pointAgg
	traces  map[int]*traceAgg // a replayed trace's requests, by point
	from    map[int]int64
	settled int64 // Settled's instant; 0 when never told

	// SweepApart, with Ordered: records are added in another order, and
	// given again in end order to Sweep, which alone feeds the sweep of
	// requests in flight (a sharded run's workers, read one after the
	// other, then merged by end).
	SweepApart bool
}

// Settled says that no record added from now on was sent before ns (model
// time): the run knows which requests are still in flight. A closed loop's
// sweep of requests in flight then lets go of what is before ns instead of
// keeping the last sweepLookback of requests (inflight.go).
func (a *Aggregator) Settled(ns int64) {
	a.settled = max(a.settled, ns)
}

// From says that no measured request of point i was sent before ns (model
// time, the records' clock): the point's start, or its measured window's
// start as run.json holds it. With it, slicing counts each request as it
// comes instead of keeping its chunks to the end, so that memory does not
// grow with the length of the point; call it before the point's first Add.
func (a *Aggregator) From(i int, ns int64) {
	if a.from == nil {
		a.from = map[int]int64{}
	}
	a.from[i] = ns
}

// FromRun gives From the points' starts that run (run.json) holds: each
// point's measured window's first send, or else the point's start; nil
// gives none.
func (a *Aggregator) FromRun(run *record.Run) {
	if run == nil {
		return
	}
	for _, pc := range run.Points {
		ns := pc.StartedNS
		if !pc.Span.Empty() {
			ns = pc.StartNS
		}
		if ns > 0 {
			a.From(pc.Index, (&record.Record{SentNS: ns}).ModelTime(run.Scale()).SentNS)
		}
	}
}

// Add folds one record into its load point.
func (a *Aggregator) Add(r *record.Record) {
	if a.points == nil {
		a.points = map[int]*pointAgg{}
	}
	p := a.points[r.Point]
	if p == nil {
		p = &pointAgg{index: r.Point, load: r.Load, api: r.API, model: r.Model, errors: map[string]int{}, slice: a.Slice}
		if c := r.Load.Concurrency; a.Ordered && c > 0 && r.Session == 0 {
			p.sw = &sweeper{thr: int(math.Ceil(heldFraction * float64(c))), users: c, settled: &a.settled, apart: a.SweepApart}
		}
		if lo, ok := a.from[r.Point]; ok && a.Slice > 0 {
			p.stream = &sliceStream{lo: lo, w: int64(a.Slice), settled: &a.settled}
		}
		a.points[r.Point] = p
	}
	if r.TraceLine > 0 {
		if a.traces == nil {
			a.traces = map[int]*traceAgg{}
		}
		if a.traces[r.Point] == nil {
			a.traces[r.Point] = &traceAgg{}
		}
		a.traces[r.Point].add(r)
	}
	p.add(r)
}

// Sweeping reports whether a point sweeps its requests in flight, so
// that Sweep has something to do.
func (a *Aggregator) Sweeping() bool {
	for _, p := range a.points {
		if p.sw != nil {
			return true
		}
	}
	return false
}

// Sweep gives the sweep of requests in flight one record, in the order
// requests ended, when SweepApart; the record must have been added.
func (a *Aggregator) Sweep(r *record.Record) {
	p := a.points[r.Point]
	if p == nil || p.sw == nil || r.Phase == record.PhaseWarmup || (r.Error != nil && r.Error.Class == record.ClassCancelled) {
		return
	}
	p.sw.add(r.SentNS, r.EndNS)
}

// Points returns the summaries ordered by point index.
func (a *Aggregator) Points() []PointSummary {
	idx := make([]int, 0, len(a.points))
	for i := range a.points {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]PointSummary, 0, len(idx))
	for _, i := range idx {
		out = append(out, a.points[i].summary())
	}
	return out
}

// Point returns the summary of one point and whether it has any records.
func (a *Aggregator) Point(i int) (PointSummary, bool) {
	p, ok := a.points[i]
	if !ok {
		return PointSummary{}, false
	}
	return p.summary(), true
}

type pointAgg struct {
	index int
	load  record.Load
	api   string
	model string

	completed, failed, cancelled int
	errors                       map[string]int
	samples                      map[string]sample

	ttft, ttftSched, ttfo, itl, tpot, e2e, e2eSched, queue      stats.Sample
	decode, prefill, srvPrefill, srvDecode, promptToks, outToks stats.Sample

	firstSent, lastEnd, firstSched, lastSched int64
	measured                                  int
	busyNS                                    int64
	intervals                                 []interval
	turns                                     []turn // multi-turn requests, for think time
	outSum, inSum                             int64
	shortfall, shortfallToks, mismatch        int
	mismatchChat                              bool
	prefix                                    prefixAgg

	sw        *sweeper      // in flight swept as records come, or nil: intervals kept
	slice     time.Duration // slices' length, 0 for none
	sliceReqs []sliceReq    // requests kept to be sliced at the end
	stream    *sliceStream  // requests sliced as they came (slicestream.go)

	warm                Warmup
	warmSeen            bool
	warmFirst           int64 // SentNS of the earliest warm-up request seen
	warmT, warmE, warmD stats.Sample
}

// interval is one measured, non-cancelled request: sent to end, and
// whether it ended by completing.
type interval struct {
	start, end int64
	ok         bool
}

func (p *pointAgg) add(r *record.Record) {
	if r.Phase == record.PhaseWarmup {
		p.addWarmup(r)
		return
	}
	if r.Error != nil && r.Error.Class == record.ClassCancelled {
		p.cancelled++
		return
	}
	p.window(r)
	p.keepForSlices(r)
	if r.Error != nil {
		p.failed++
		p.errors[r.Error.Class]++
		p.sample(r)
		return
	}
	p.completed++
	p.latencies(r)
	p.tokens(r)
	p.prefix.add(r)
}

// window tracks the measurement window, offered schedule and in-flight
// intervals of every measured, non-cancelled request.
func (p *pointAgg) window(r *record.Record) {
	if p.measured == 0 || r.SentNS < p.firstSent {
		p.firstSent = r.SentNS
	}
	if p.measured == 0 || r.EndNS > p.lastEnd {
		p.lastEnd = r.EndNS
	}
	if p.measured == 0 || r.ScheduledNS < p.firstSched {
		p.firstSched = r.ScheduledNS
	}
	if p.measured == 0 || r.ScheduledNS > p.lastSched {
		p.lastSched = r.ScheduledNS
	}
	p.measured++
	if r.EndNS > r.SentNS {
		p.busyNS += r.EndNS - r.SentNS
	}
	if p.sw != nil {
		if !p.sw.apart {
			p.sw.add(r.SentNS, r.EndNS)
		}
		p.sw.late = p.sw.late || r.Session > 0 // think time is not swept
	} else {
		p.intervals = append(p.intervals, interval{r.SentNS, r.EndNS, r.Error == nil})
	}
	if r.Session > 0 {
		p.turns = append(p.turns, turn{r.Session, r.Turn, r.ScheduledNS, r.EndNS})
	}
}

func (p *pointAgg) latencies(r *record.Record) {
	p.e2e.Add(E2E(r))
	p.e2eSched.Add(E2ESched(r))
	p.queue.Add(Queue(r))
	ttft, ok := TTFT(r)
	if !ok {
		return
	}
	p.ttft.Add(ttft)
	if v, ok := TTFTSched(r); ok {
		p.ttftSched.Add(v)
	}
	if v, ok := TTFO(r); ok {
		p.ttfo.Add(v)
	}
	if v, ok := PrefillSpeed(r); ok {
		p.prefill.Add(v)
	}
	if tpot, ok := TPOT(r); ok {
		p.tpot.Add(tpot)
		p.decode.Add(1000 / tpot)
	}
	ITL(r.Chunks, p.itl.Add)
}

func (p *pointAgg) tokens(r *record.Record) {
	p.outSum += int64(r.OutputTokens)
	p.inSum += int64(r.PromptTokens)
	p.outToks.Add(float64(r.OutputTokens))
	if r.PromptTokens > 0 {
		p.promptToks.Add(float64(r.PromptTokens))
	}
	if v, ok := ServerPrefillSpeed(r.Server); ok {
		p.srvPrefill.Add(v)
	}
	if v, ok := ServerDecodeSpeed(r.Server); ok {
		p.srvDecode.Add(v)
	}
	if r.OutputTokensRequested > 0 && r.OutputTokens < r.OutputTokensRequested {
		p.shortfall++
		p.shortfallToks += r.OutputTokensRequested - r.OutputTokens
	}
	if r.PromptTokensRequested > 0 && r.PromptTokens > 0 && r.PromptTokens != r.PromptTokensRequested {
		p.mismatch++
		if record.ChatAPI(r.API) {
			p.mismatchChat = true
		}
	}
}

func (p *pointAgg) addWarmup(r *record.Record) {
	if !p.warmSeen || r.SentNS < p.warmFirst {
		p.warmFirst = r.SentNS
		p.warm.FirstTTFTMS = nil
		if v, ok := TTFT(r); ok && r.Error == nil {
			p.warm.FirstTTFTMS = &v
		}
	}
	p.warmSeen = true
	p.warm.Count++
	if r.Error != nil {
		p.warm.Failed++
		return
	}
	p.warmE.Add(E2E(r))
	if v, ok := TTFT(r); ok {
		p.warmT.Add(v)
	}
	if v, ok := DecodeSpeed(r); ok {
		p.warmD.Add(v)
	}
}

// sample is one failed request's message, kept per class.
type sample struct {
	id  int64
	msg string
}

// sample keeps the message of the class's first request (lowest id), so
// that report picks the same one as run whatever order records arrive in.
func (p *pointAgg) sample(r *record.Record) {
	if p.samples == nil {
		p.samples = map[string]sample{}
	}
	if old, ok := p.samples[r.Error.Class]; !ok || r.ID < old.id {
		p.samples[r.Error.Class] = sample{r.ID, r.Error.Message}
	}
}

func (p *pointAgg) summary() PointSummary {
	errs := make(map[string]int, len(p.errors))
	for k, v := range p.errors {
		errs[k] = v
	}
	msgs := make(map[string]string, len(p.samples))
	for k, v := range p.samples {
		msgs[k] = v.msg
	}
	s := PointSummary{
		Index: p.index, Load: p.load, API: p.api, Model: p.model,
		Requests:  Requests{Completed: p.completed, Failed: p.failed, Cancelled: p.cancelled, Errors: errs, ErrorSamples: msgs},
		AllFailed: p.failed > 0 && p.completed == 0,
		TTFT:      p.ttft.Summary(), TTFTSched: p.ttftSched.Summary(), TTFO: p.ttfo.Summary(),
		ITL: p.itl.Summary(), TPOT: p.tpot.Summary(), E2E: p.e2e.Summary(),
		E2ESched: p.e2eSched.Summary(), Queue: p.queue.Summary(),
		DecodeTPSReq: p.decode.Summary(), PrefillTPS: p.prefill.Summary(),
		ServerPrefill: p.srvPrefill.Summary(), ServerDecode: p.srvDecode.Summary(),
		PromptTokens: p.promptToks.Summary(), OutputTokens: p.outToks.Summary(),
		OutputShortfall: p.shortfall, PromptMismatch: p.mismatch,
		ConcurrencyMax: maxInFlight(p.intervals),
	}
	if p.sw != nil {
		s.ConcurrencyMax, _ = p.sw.final()
	}
	if n := p.completed + p.failed; n > 0 {
		s.ErrorRate = float64(p.failed) / float64(n)
	} else if p.cancelled > 0 {
		s.ErrorRate = 1 // nothing completed: cancelled requests are not a success
	}
	if p.measured > 0 && p.lastEnd > p.firstSent {
		win := float64(p.lastEnd-p.firstSent) / 1e9
		s.DurationS = win
		s.OutputTPS = float64(p.outSum) / win
		s.InputTPS = float64(p.inSum) / win
		s.RequestRate = float64(p.completed) / win
		s.RequestsPerMinute = 60 * s.RequestRate
		s.ConcurrencyAchieved = float64(p.busyNS) / float64(p.lastEnd-p.firstSent)
	}
	if p.load.Rate > 0 && p.measured > 1 && p.lastSched > p.firstSched {
		// n arrivals span n−1 inter-arrival gaps.
		s.OfferedRate = float64(p.measured-1) / (float64(p.lastSched-p.firstSched) / 1e9)
	}
	p.achieved(&s)
	s.Overload = p.overload()
	if p.completed > 0 {
		s.PromptTokensMean = float64(p.inSum) / float64(p.completed)
		s.OutputTokensMean = float64(p.outSum) / float64(p.completed)
	}
	if p.warmSeen {
		w := p.warm
		w.TTFT, w.E2E, w.DecodeTPSReq = p.warmT.Summary(), p.warmE.Summary(), p.warmD.Summary()
		s.Warmup = &w
	}
	s.PrefixCache = p.prefix.summary()
	s.Slices = p.slices()
	s.Drift = DriftOf(s.Slices)
	s.Warnings = p.warnings(s)
	return s
}

// maxInFlight returns the largest number of intervals open at one instant;
// an interval ending exactly when another starts does not overlap it.
func maxInFlight(iv []interval) int {
	best := 0
	sweep(iv, func(_, _ int64, open int) { best = max(best, open) })
	return best
}
