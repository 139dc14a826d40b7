package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// TraceOptions say which trace to replay, and which part of it how fast
// (run --trace and its flags; docs/WORKLOADS.md, "Trace replay").
type TraceOptions struct {
	Path   string
	Format string // record.TraceMooncake, TraceAzure, TraceBurstGPT, or "" to tell by content
	// BlockSize is the tokens per hash id (0: DefaultTraceBlockSize).
	BlockSize int
	// Speed divides the trace's gaps: 2 replays it in half the time (0: 1).
	Speed float64
	// Start and Duration take a window of the trace, in its own time from
	// its first request (0: from the start, to the end); Max keeps the
	// window's first Max requests (0: all).
	Start, Duration time.Duration
	Max             int
}

// TraceOptionError is an option that cannot be used; Flag names run's
// flag.
type TraceOptionError struct {
	Flag string
	Err  error
}

func (e *TraceOptionError) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *TraceOptionError) Unwrap() error { return e.Err }

// Validate reports the first option that cannot be used.
func (o TraceOptions) Validate() error {
	bad := func(flag, format string, args ...any) error {
		return &TraceOptionError{Flag: flag, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case o.Path == "":
		return bad("trace", "give the trace file")
	case o.Format != "" && o.Format != record.TraceMooncake && o.Format != record.TraceAzure && o.Format != record.TraceBurstGPT:
		return bad("trace-format", "%q: want %s, %s or %s (or leave it out to tell by content)", o.Format, record.TraceMooncake, record.TraceAzure, record.TraceBurstGPT)
	case o.BlockSize < 0:
		return bad("trace-block-size", "%d: must not be negative", o.BlockSize)
	case o.Speed < 0 || math.IsNaN(o.Speed) || math.IsInf(o.Speed, 0):
		return bad("trace-speed", "%v: must be a positive number (2 replays twice as fast)", o.Speed)
	case o.Start < 0:
		return bad("trace-start", "%v: must not be negative", o.Start)
	case o.Duration < 0:
		return bad("trace-duration", "%v: must not be negative", o.Duration)
	case o.Max < 0:
		return bad("trace-max", "%d: must not be negative", o.Max)
	}
	return nil
}

func (o TraceOptions) speed() float64 {
	if o.Speed > 0 {
		return o.Speed
	}
	return 1
}

func (o TraceOptions) blockSize() int {
	if o.BlockSize > 0 {
		return o.BlockSize
	}
	return DefaultTraceBlockSize
}

// window reads the requests of a trace's window, with each one's replay
// offset: its time after the window's first request, divided by the speed.
type window struct {
	o       TraceOptions
	r       *TraceReader
	zero    time.Duration // the file's first request
	first   time.Duration // the window's first request
	zeroSet bool
	begun   bool
	inside  int
}

func openWindow(o TraceOptions) (*window, error) {
	r, err := OpenTrace(o.Path, o.Format)
	if err != nil {
		return nil, err
	}
	return &window{o: o, r: r}, nil
}

// next returns the window's next request and its offset; io.EOF after
// its last.
func (w *window) next() (TraceRequest, time.Duration, error) {
	for {
		if w.o.Max > 0 && w.inside >= w.o.Max {
			return TraceRequest{}, 0, io.EOF
		}
		r, err := w.r.Next()
		if err != nil {
			return r, 0, err
		}
		if !w.zeroSet {
			w.zero, w.zeroSet = r.At, true
		}
		since := r.At - w.zero
		if since < w.o.Start {
			continue
		}
		if w.o.Duration > 0 && since >= w.o.Start+w.o.Duration {
			return TraceRequest{}, 0, io.EOF
		}
		if !w.begun {
			w.first, w.begun = r.At, true
		}
		w.inside++
		return r, time.Duration(float64(r.At-w.first) / w.o.speed()), nil
	}
}

func (w *window) close() { w.r.Close() }

// errTraceChanged: a second read of the file did not find what the first
// did.
var errTraceChanged = errors.New("the trace file changed while it was replayed")
