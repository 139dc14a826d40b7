package sse

import (
	"io"
	"time"
)

// NDJSON reads newline-delimited JSON (Ollama's native streaming
// API): each non-blank line is one event whose Data is the line without
// its "\n" or "\r\n". It does not parse the JSON. A last line without a
// newline at EOF is delivered, and Truncated says so.
type NDJSON struct {
	rd reader
	ev Event
}

// NewNDJSON returns a decoder reading from r. now is called right
// after each Read returns (nil means time.Now).
func NewNDJSON(r io.Reader, now func() time.Time) *NDJSON {
	d := &NDJSON{}
	d.Reset(r, now)
	return d
}

// Reset makes d read a new stream, keeping its buffer and size limit.
func (d *NDJSON) Reset(r io.Reader, now func() time.Time) {
	d.rd.reset(r, now, true)
	d.ev = Event{}
}

// SetMaxEventSize sets the limit on one line's size (n <= 0 restores
// DefaultMaxEventSize). Call it before the first Next.
func (d *NDJSON) SetMaxEventSize(n int) { d.rd.setMax(n) }

// Event returns the line Next just read.
func (d *NDJSON) Event() Event { return d.ev }

// Err returns the first error other than io.EOF, or nil.
func (d *NDJSON) Err() error { return d.rd.err }

// Stray is always nil: every non-blank line is an event, and whether it
// is JSON is for the caller to see.
func (d *NDJSON) Stray() []byte { return nil }

// Truncated reports whether the last line lacked its newline.
func (d *NDJSON) Truncated() bool { return d.rd.truncated }

// Next reads the next non-blank line. It returns false at the end of the
// stream or on error (see Err).
func (d *NDJSON) Next() bool {
	r := &d.rd
	if r.done || r.err != nil {
		return false
	}
	return r.scan(nil, d.deliver, d.finish)
}

func (d *NDJSON) deliver(line []byte) bool {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if blank(line) {
		return false
	}
	d.ev = Event{Data: line, At: d.rd.at}
	return true
}

func (d *NDJSON) finish() bool {
	r := &d.rd
	r.done = true
	if r.readErr != nil {
		r.err = r.readErr
		return false
	}
	rest := r.rest()
	if len(rest) == 0 {
		return false
	}
	r.truncated = true
	if len(rest) > r.max {
		r.err = ErrTooLarge
		return false
	}
	return d.deliver(rest)
}

// blank reports whether b holds only JSON whitespace.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
