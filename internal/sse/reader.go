// Package sse reads the two streaming formats inference servers answer
// with: text/event-stream (Server-Sent Events, EventStream) and
// newline-delimited JSON (NDJSON). It knows nothing of LLMs. Both
// implement Decoder: Scanner-style (Next, Event, Err), they parse whatever
// each Read delivers without waiting for more, and stamp every event with
// the time the Read that completed it returned.
package sse

import (
	"bytes"
	"errors"
	"io"
	"time"
)

// DefaultMaxEventSize bounds one event (or one NDJSON line). Real chunks are
// a few hundred bytes; 8 MiB admits a whole long completion sent at once by
// a server that ignored streaming, yet stops a runaway body from taking the
// process's memory.
const DefaultMaxEventSize = 8 << 20

// initialBufSize is the read buffer a decoder starts with. It is small
// because a run holds thousands of streams open at once, and a chunk is a
// few hundred bytes; it grows (up to the event size limit) for a stream
// whose lines are longer, and (up to burstBufSize) for one whose reads
// fill it, so that a fast stream is read in few system calls.
const initialBufSize = 1 << 10

// burstBufSize bounds the growth for reads that fill the buffer; a
// decoder keeps a buffer up to this size from stream to stream.
const burstBufSize = 16 << 10

// minMaxEventSize keeps the limit above what the BOM check needs.
const minMaxEventSize = 16

// ErrTooLarge is returned by Err when an event or line exceeds the limit.
var ErrTooLarge = errors.New("sse: event exceeds the size limit")

// Decoder reads the events of one stream, whatever its format, so that a
// client needs one read loop for both:
//
//	d.Reset(body, time.Now)
//	for d.Next() {
//		use(d.Event())
//	}
//	if err := d.Err(); err != nil { ... }
type Decoder interface {
	// Next decodes the next event, reading as needed. It returns false at
	// the end of the stream or on error (see Err).
	Next() bool
	// Event returns the event Next just decoded.
	Event() Event
	// Err returns the first error other than io.EOF, or nil.
	Err() error
	// Truncated reports whether the stream ended inside an event or line.
	// A truncated final event that had data is still delivered by Next.
	Truncated() bool
	// Stray returns the start of what was read before the first event and
	// is not part of the format (nil once an event arrived): a body that is
	// not a stream of this format shows up here.
	Stray() []byte
	// Reset makes the decoder read a new stream (r may be nil to drop the
	// old one), keeping its buffers and size limit. now is called right
	// after each Read returns (nil means time.Now).
	Reset(r io.Reader, now func() time.Time)
	// SetMaxEventSize sets the limit on one event's size and on one
	// line's (n <= 0 restores DefaultMaxEventSize). Call it before the
	// first Next.
	SetMaxEventSize(n int)
}

var (
	_ Decoder = (*EventStream)(nil)
	_ Decoder = (*NDJSON)(nil)
)

// Event is one decoded event. Data is valid only until the next call to
// Next; copy it to keep it.
type Event struct {
	// Data is the event's data: several data lines are joined by "\n".
	// For NDJSON, the line without its terminator.
	Data []byte
	// Event is the event type ("" when the stream named none).
	Event string
	// ID is the last event ID the stream set; it persists across events.
	ID string
	// Retry is the last reconnection time the stream asked for (0 if none).
	Retry time.Duration
	// At is when the Read that delivered the event's last byte returned.
	At time.Time
}

// reader holds the byte buffer shared by both decoders: it reads, stamps
// each read with now(), and hands out complete lines.
type reader struct {
	r     io.Reader
	now   func() time.Time
	buf   []byte
	start int // first unconsumed byte
	end   int // end of the bytes read
	at    time.Time
	max   int
	// skipLF is set when a line ended with '\r' as the last byte read: a
	// '\n' arriving next belongs to the same line ending.
	skipLF bool
	// lfOnly makes '\n' the only line terminator (NDJSON, where a bare
	// '\r' is JSON whitespace).
	lfOnly bool
	// full is set when the last read (nearly) filled the buffer.
	full      bool
	eof       bool
	readErr   error
	err       error
	truncated bool
	done      bool
}

func (r *reader) reset(src io.Reader, now func() time.Time, lfOnly bool) {
	if now == nil {
		now = time.Now
	}
	max := r.max
	if max == 0 {
		max = DefaultMaxEventSize
	}
	buf := r.buf
	if buf == nil || len(buf) > burstBufSize {
		buf = make([]byte, initialBufSize)
	}
	*r = reader{r: src, now: now, buf: buf, max: max, lfOnly: lfOnly}
}

func (r *reader) setMax(n int) {
	if n <= 0 {
		n = DefaultMaxEventSize
	}
	r.max = max(n, minMaxEventSize)
}

// fill reads once more. It compacts and grows the buffer as needed and
// sets r.err when a partial line is already longer than the limit.
func (r *reader) fill() {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	switch {
	case r.end == len(r.buf): // a partial line fills the buffer
		if len(r.buf) > r.max {
			r.err = ErrTooLarge
			return
		}
		r.grow(min(2*len(r.buf), r.max+1))
	case r.full && len(r.buf) < burstBufSize:
		r.grow(min(2*len(r.buf), burstBufSize))
	}
	r.full = false
	for empty := 0; ; empty++ {
		space := len(r.buf) - r.end
		n, err := r.r.Read(r.buf[r.end:])
		if n > 0 {
			r.at = r.now()
			r.end += n
			// More may be waiting: a larger buffer next time. Nearly full
			// counts, as a reader that drops framing (HTTP's chunked
			// coding) returns a little less than it read.
			r.full = n >= space-space/8
		}
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			r.readErr = err
		}
		if n > 0 || err != nil {
			return
		}
		if empty == 100 {
			r.readErr = io.ErrNoProgress
			return
		}
	}
}

func (r *reader) grow(n int) {
	nb := make([]byte, n)
	copy(nb, r.buf[:r.end])
	r.buf = nb
}

// line returns the next complete line without its terminator ('\n', '\r'
// or "\r\n"), valid until the next fill. ok is false when no complete line
// is buffered.
func (r *reader) line() (line []byte, ok bool) {
	if r.skipLF && r.start < r.end {
		r.skipLF = false
		if r.buf[r.start] == '\n' {
			r.start++
		}
	}
	b := r.buf[r.start:r.end]
	var i int
	if r.lfOnly {
		i = bytes.IndexByte(b, '\n')
	} else {
		i = indexEOL(b)
	}
	if i < 0 {
		return nil, false
	}
	line = b[:i]
	r.start += i + 1
	if b[i] == '\r' {
		if i+1 < len(b) {
			if b[i+1] == '\n' {
				r.start++
			}
		} else {
			r.skipLF = true
		}
	}
	if len(line) > r.max {
		r.err = ErrTooLarge
		return nil, false
	}
	return line, true
}

// indexEOL finds the first '\n' or '\r'. Two IndexByte passes beat a
// byte loop because both are vectorised and '\r' is rare.
func indexEOL(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	lim := b
	if n >= 0 {
		lim = b[:n]
	}
	if c := bytes.IndexByte(lim, '\r'); c >= 0 {
		return c
	}
	return n
}

// rest returns the unterminated bytes left at EOF and consumes them.
func (r *reader) rest() []byte {
	if r.skipLF && r.start < r.end && r.buf[r.start] == '\n' {
		r.start++
	}
	b := r.buf[r.start:r.end]
	r.start = r.end
	return b
}

// scan is the read loop both decoders share: it hands each complete line
// to line until line reports an event, reads more when no complete line is
// buffered, and calls finish at the end of the input. ready, when set,
// holds lines back until enough bytes are buffered to judge the stream's
// start (the event stream's BOM).
func (r *reader) scan(ready func() bool, line func([]byte) bool, finish func() bool) bool {
	for {
		if ready == nil || ready() {
			for {
				l, ok := r.line()
				if r.err != nil {
					return false
				}
				if !ok {
					break
				}
				if line(l) {
					return true
				}
				if r.err != nil {
					return false
				}
			}
		}
		if r.eof || r.readErr != nil {
			return finish()
		}
		r.fill()
		if r.err != nil {
			return false
		}
	}
}
