package metrics

import (
	"cmp"
	"math"
	"slices"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Slices of a sustained run (docs/METRICS.md, "Slices and drift"): a load
// point's window cut into equal spans of model time, each with its own
// figures, so that a long run shows whether it stayed the same.

// Slice phases. Only steady slices are judged for drift.
const (
	PhaseWarmup = "warmup" // the load was still ramping up (rampFraction)
	PhaseSteady = "steady"
	PhaseDrain  = "drain" // shorter than the slice, or after the last send: the queue emptying
)

// rampFraction: a leading slice whose mean in-flight count is below this
// share of the steady level (the median over the full, sending slices) is
// warm-up. Nine tenths is the share Achieved load calls holding the load.
const rampFraction = heldFraction

// Slice is one slice of a load point's window (points[].slices[]).
type Slice struct {
	Index int `json:"index"`
	// StartS and EndS are model-time seconds from the start of the point's
	// window (its earliest send).
	StartS    float64 `json:"start_s"`
	EndS      float64 `json:"end_s"`
	Phase     string  `json:"phase"`
	Completed int     `json:"completed"`
	Errors    int     `json:"errors"`
	// OutputTokens are the tokens of successful requests whose chunks
	// arrived in the slice; OutputTPS divides them by the slice's length.
	OutputTokens int     `json:"output_tokens"`
	OutputTPS    float64 `json:"output_tps"`
	InFlightMean float64 `json:"in_flight_mean"`
	// TTFT of the requests whose first token arrived in the slice, and
	// decode speed of those that completed in it.
	TTFTCount   int      `json:"ttft_count"`
	TTFTP50     *float64 `json:"ttft_ms_p50"`
	TTFTP95     *float64 `json:"ttft_ms_p95"`
	DecodeCount int      `json:"decode_count"`
	DecodeP50   *float64 `json:"decode_tps_per_request_p50"`
	// Telemetry over the slice, when any was sampled.
	Telemetry *SliceTelemetry `json:"telemetry,omitempty"`

	fromNS, toNS int64 // the slice on the records' clock, model time
}

// Span is the slice on the records' clock, in model-time ns since the
// run's epoch: what a telemetry summary of the slice reads.
func (s *Slice) Span() (from, to int64) { return s.fromNS, s.toNS }

// sliceReq is what slicing keeps of one measured, non-cancelled request.
type sliceReq struct {
	sent, first, end int64
	ok               bool
	tokens           int
	// Each chunk's arrival (ns after sent) and its tokens; n is nil when
	// every chunk carried one token, which halves what a long run keeps.
	at []int64
	n  []int32
	// The request's TTFT and decode speed as the point defines them
	// (NaN where it has none).
	ttft, decode float64
}

// keepForSlices keeps r for slicing when the aggregator slices.
func (p *pointAgg) keepForSlices(r *record.Record) {
	if p.slice <= 0 {
		return
	}
	q := sliceReq{sent: r.SentNS, first: r.FirstTokenNS, end: r.EndNS, ok: r.Error == nil, ttft: math.NaN(), decode: math.NaN()}
	if q.ok {
		q.tokens = r.OutputTokens
		q.keepChunks(r.Chunks)
		if v, ok := TTFT(r); ok {
			q.ttft = v
		}
		if v, ok := DecodeSpeed(r); ok {
			q.decode = v
		}
	}
	if p.stream != nil && p.stream.take(&q, p.firstSent) {
		return
	}
	p.sliceReqs = append(p.sliceReqs, q)
}

// keepChunks keeps the chunks' arrivals, and their token counts unless
// they are all one.
func (q *sliceReq) keepChunks(cs []record.Chunk) {
	q.at = make([]int64, len(cs))
	ones := true
	for i, c := range cs {
		q.at[i] = c.AtNS
		ones = ones && c.Tokens == 1
	}
	if ones {
		return
	}
	q.n = make([]int32, len(cs))
	for i, c := range cs {
		q.n[i] = int32(c.Tokens)
	}
}

// chunkTokens is chunk i's token count.
func (q *sliceReq) chunkTokens(i int) int {
	if q.n == nil {
		return 1
	}
	return int(q.n[i])
}

// slicer accumulates one point's slices.
type slicer struct {
	w0, width int64
	out       []Slice
	busy      []int64
	ttft, dec []stats.Sample
}

// slices cuts the point's window [first send, last end] into slices of
// p.slice; the last one is shorter when the window is not a multiple.
func (p *pointAgg) slices() []Slice {
	if p.slice <= 0 || p.measured == 0 || p.lastEnd <= p.firstSent {
		return nil
	}
	width := int64(p.slice)
	n := int((p.lastEnd - p.firstSent + width - 1) / width)
	sl := &slicer{w0: p.firstSent, width: width, out: make([]Slice, n), busy: make([]int64, n),
		ttft: make([]stats.Sample, n), dec: make([]stats.Sample, n)}
	for k := range sl.out {
		sl.ttft[k], sl.dec[k] = sliceSample(), sliceSample()
		from := p.firstSent + int64(k)*width
		sl.out[k] = Slice{Index: k, fromNS: from, toNS: min(from+width, p.lastEnd)}
	}
	if p.stream != nil {
		p.stream.into(sl, p.firstSent)
	}
	for i := range p.sliceReqs {
		q := &p.sliceReqs[i]
		sl.inFlight(q.sent, q.end)
		sl.add(q)
	}
	sl.finish()
	markPhases(sl.out, width, p.lastSend(), p.firstRound())
	return sl.out
}

// at is the index of the slice holding instant t; the window's end
// belongs to the last slice.
func (sl *slicer) at(t int64) int {
	return max(0, min(len(sl.out)-1, int((t-sl.w0)/sl.width)))
}

// inFlight adds the request's time in flight to each slice it overlaps.
func (sl *slicer) inFlight(start, end int64) {
	for k := sl.at(start); k < len(sl.out) && sl.out[k].fromNS < end; k++ {
		sl.busy[k] += max(0, min(end, sl.out[k].toNS)-max(start, sl.out[k].fromNS))
	}
}

// add counts one request: its outcome where it ended, each chunk's tokens
// where the chunk arrived, its TTFT where its first token arrived.
func (sl *slicer) add(q *sliceReq) {
	k := sl.at(q.end)
	if !q.ok {
		sl.out[k].Errors++
		return
	}
	sl.out[k].Completed++
	counted := 0
	for i, at := range q.at {
		n := q.chunkTokens(i)
		sl.out[sl.at(q.sent+at)].OutputTokens += n
		counted += n
	}
	// Tokens the chunks do not account for (a record without chunks) are
	// counted where the request ended, so the slices sum to the point.
	sl.out[k].OutputTokens += q.tokens - counted
	if !math.IsNaN(q.ttft) {
		sl.ttft[sl.at(q.first)].Add(q.ttft)
	}
	sl.dec[k].Add(q.decode) // NaN is no sample
}

func (sl *slicer) finish() {
	for k := range sl.out {
		s := &sl.out[k]
		s.StartS, s.EndS = float64(s.fromNS-sl.w0)/1e9, float64(s.toNS-sl.w0)/1e9
		if d := float64(s.toNS - s.fromNS); d > 0 {
			s.OutputTPS = float64(s.OutputTokens) / (d / 1e9)
			s.InFlightMean = float64(sl.busy[k]) / d
		}
		s.TTFTCount, s.DecodeCount = sl.ttft[k].Len(), sl.dec[k].Len()
		s.TTFTP50, s.TTFTP95 = quantile(&sl.ttft[k], 0.5), quantile(&sl.ttft[k], 0.95)
		s.DecodeP50 = quantile(&sl.dec[k], 0.5)
	}
}

func quantile(s *stats.Sample, p float64) *float64 {
	if s.Len() == 0 {
		return nil
	}
	v := s.Quantile(p)
	return &v
}

// lastSend is the latest send of a measured request.
func (p *pointAgg) lastSend() int64 {
	if p.sw != nil {
		return p.sw.lastStart
	}
	var last int64
	for _, v := range p.intervals {
		last = max(last, v.start)
	}
	return last
}

// firstRound is, in a closed loop, when the first round of measured
// requests (one per user: the earliest sends) had all ended; 0 for an open
// loop, or when warm-up requests took the first round (at least one per
// user). Until then the server serves users that all started at once, a
// burst of simultaneous prefills a running server does not see.
func (p *pointAgg) firstRound() int64 {
	c := p.load.Concurrency
	if c <= 0 || p.measured == 0 || p.warm.Count >= c {
		return 0
	}
	if p.sw != nil {
		return p.sw.firstRound()
	}
	iv := slices.Clone(p.intervals)
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	var end int64
	for _, v := range iv[:min(c, len(iv))] {
		end = max(end, v.end)
	}
	return end
}

// markPhases marks the drain (a slice shorter than the others, or one
// that starts after the last request was sent: only the queue emptying),
// then the warm-up: the leading slices that start before firstRound, or
// whose mean in flight is below rampFraction of the median of the full
// slices that were sending (the load ramping up).
func markPhases(ss []Slice, width, lastSend, firstRound int64) {
	var levels []float64
	for i := range ss {
		s := &ss[i]
		s.Phase = PhaseSteady
		if s.toNS-s.fromNS < width || (i > 0 && s.fromNS >= lastSend) {
			s.Phase = PhaseDrain
			continue
		}
		levels = append(levels, s.InFlightMean)
	}
	if len(levels) == 0 {
		return
	}
	slices.Sort(levels)
	level := stats.Quantile(levels, 0.5)
	for i := range ss {
		if ss[i].Phase != PhaseSteady || (ss[i].fromNS >= firstRound && ss[i].InFlightMean >= rampFraction*level) {
			return
		}
		ss[i].Phase = PhaseWarmup
	}
}
