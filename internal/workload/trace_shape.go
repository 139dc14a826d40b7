package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// Trace is a trace file read once through: its window checked and its
// shape known, ready to be read again, one request at a time, as a load
// point's schedule (Arrivals) and requests (Source).
type Trace struct {
	Options TraceOptions
	// Shape is what run.json keeps of it.
	Shape record.Trace
	// Last is the replay offset of the window's last request.
	Last time.Duration
	// PeakRate is the most requests in one second of replay time.
	PeakRate int
}

// traceBins is the most bins of the arrivals-over-time histogram: enough
// to see bursts on a page, few enough for a terminal line.
const traceBins = 60

// ScanTrace reads the trace through once, in bounded memory (a line at a
// time; a bit per hash id seen), checking every request of the window
// and measuring its shape.
func ScanTrace(o TraceOptions) (*Trace, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	w, err := openWindow(o)
	if err != nil {
		return nil, err
	}
	defer w.close()
	sc := newScan(o)
	for {
		r, off, err := w.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := sc.add(r, off); err != nil {
			return nil, &TraceError{Path: o.Path, Line: r.Line, Err: err}
		}
	}
	if sc.n == 0 {
		return nil, &TraceError{Path: o.Path, Err: errors.New(emptyWindow(o, w.r))}
	}
	t := sc.finish(w.r)
	return t, nil
}

func emptyWindow(o TraceOptions, r *TraceReader) string {
	msg := "no request to replay"
	if r.Skipped > 0 {
		msg += fmt.Sprintf(" (%d rows with a zero length were left out, the first at line %d)", r.Skipped, r.SkippedLine)
	}
	if o.Start > 0 || o.Duration > 0 {
		msg += fmt.Sprintf(" in the window of --trace-start %v --trace-duration %v", o.Start, o.Duration)
	}
	return msg
}

// scan gathers a trace's shape as its requests go by.
type scan struct {
	o              TraceOptions
	n              int
	last           time.Duration
	perSecond      []int // requests per second of replay time
	prompt, output stats.Sample
	blocks         bool
	tokens, reused int64
	seen           idSet
	labels         map[string]int
	longest        int
	longestLine    int64
}

func newScan(o TraceOptions) *scan { return &scan{o: o} }

func (s *scan) add(r TraceRequest, off time.Duration) error {
	if err := checkBlocks(r, s.o.blockSize()); err != nil {
		return err
	}
	s.n++
	s.last = off
	sec := int(off / time.Second)
	for len(s.perSecond) <= sec {
		s.perSecond = append(s.perSecond, 0)
	}
	s.perSecond[sec]++
	s.prompt.Add(float64(r.Input))
	s.output.Add(float64(r.Output))
	if r.Input+r.Output > s.longest {
		s.longest, s.longestLine = r.Input+r.Output, r.Line
	}
	for _, l := range r.Labels {
		if s.labels == nil {
			s.labels = map[string]int{}
		}
		s.labels[l]++
	}
	if r.HashIDs != nil {
		s.blocks = true
		s.reuse(r)
	}
	return nil
}

// reuse counts the request's prompt tokens in blocks an earlier request
// had.
func (s *scan) reuse(r TraceRequest) {
	bs := s.o.blockSize()
	for i, id := range r.HashIDs {
		k := min(bs, r.Input-i*bs)
		if s.seen.has(id) {
			s.reused += int64(k)
		}
		s.seen.add(id)
	}
	s.tokens += int64(r.Input)
}

// checkBlocks refuses hash ids that cannot be the request's blocks: more
// than its prompt fills (a wrong --trace-block-size, most likely).
func checkBlocks(r TraceRequest, bs int) error {
	if need := (r.Input + bs - 1) / bs; len(r.HashIDs) > need {
		return fmt.Errorf("%d hash_ids, but input_length %d fills %d blocks of %d tokens: is --trace-block-size right?", len(r.HashIDs), r.Input, need, bs)
	}
	return nil
}

func (s *scan) finish(r *TraceReader) *Trace {
	o := s.o
	sh := record.Trace{Path: o.Path, Format: r.Format, Speed: o.speed(), StartS: o.Start.Seconds(), DurationS: o.Duration.Seconds(),
		Max: o.Max, Requests: s.n, Skipped: r.Skipped, SkippedFirstLine: r.SkippedLine, SpanS: s.last.Seconds(),
		PromptTokens: s.prompt.Summary(), OutputTokens: s.output.Summary(), Longest: s.longest, LongestLine: s.longestLine, Labels: s.labels}
	if r.Format == record.TraceMooncake {
		sh.BlockSize = o.blockSize()
	}
	if sh.SpanS > 0 {
		sh.MeanRate = float64(s.n-1) / sh.SpanS
	}
	if s.blocks && s.tokens > 0 {
		f := float64(s.reused) / float64(s.tokens)
		sh.Reuse = &f
	}
	sh.BinS, sh.Arrivals = rebin(s.perSecond)
	peak := 0
	for _, c := range s.perSecond {
		peak = max(peak, c)
	}
	return &Trace{Options: o, Shape: sh, Last: s.last, PeakRate: peak}
}

// rebin folds per-second counts into at most traceBins bins of a whole
// number of seconds.
func rebin(perSecond []int) (binS float64, out []int) {
	width := int(math.Ceil(float64(len(perSecond)) / traceBins))
	width = max(width, 1)
	out = make([]int, (len(perSecond)+width-1)/width)
	for i, c := range perSecond {
		out[i/width] += c
	}
	return float64(width), out
}

// CheckContext refuses a trace whose longest request does not fit a
// context of limit tokens (0: unknown, nothing to check).
func (t *Trace) CheckContext(limit int) error {
	if limit <= 0 || t.Shape.Longest <= limit {
		return nil
	}
	return &TraceError{Path: t.Options.Path, Line: t.Shape.LongestLine, Err: fmt.Errorf(
		"a request of %d tokens (prompt + output) does not fit the model's context of %d: replay a window without it (--trace-start, --trace-duration, --trace-max), or a model with a longer context",
		t.Shape.Longest, limit)}
}

// idSet is a set of hash ids: a bit each for the small dense ids the
// published traces use, a map for the rest.
type idSet struct {
	bits []uint64
	rest map[int64]struct{}
}

// denseIDs bounds the ids kept as bits (16 MiB of them).
const denseIDs = 1 << 27

func (s *idSet) has(id int64) bool {
	if id >= 0 && id < denseIDs {
		w := int(id / 64)
		return w < len(s.bits) && s.bits[w]&(1<<(id%64)) != 0
	}
	_, ok := s.rest[id]
	return ok
}

func (s *idSet) add(id int64) {
	if id >= 0 && id < denseIDs {
		w := int(id / 64)
		for len(s.bits) <= w {
			s.bits = append(s.bits, 0)
		}
		s.bits[w] |= 1 << (id % 64)
		return
	}
	if s.rest == nil {
		s.rest = map[int64]struct{}{}
	}
	s.rest[id] = struct{}{}
}
