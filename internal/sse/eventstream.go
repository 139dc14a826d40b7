package sse

import (
	"bytes"
	"io"
	"time"
)

var bom = []byte("\xef\xbb\xbf")

// EventStream reads a text/event-stream as the HTML standard defines it: lines
// end in "\n", "\r\n" or "\r"; a blank line dispatches the event; lines
// starting with ':' are comments; a field without a colon has an empty
// value; a leading UTF-8 BOM is dropped. Unlike a browser, it also
// delivers a final event that lacks its blank line at EOF, and says so in
// Truncated.
type EventStream struct {
	rd      reader
	data    []byte
	hasData bool
	// inEvent is set once a field line arrives, until a blank line.
	inEvent  bool
	bomDone  bool
	name     string
	lastName string
	id       string
	retry    time.Duration
	ev       Event
	// stray holds the start of the lines before the first event that
	// are not SSE fields; dispatched is set at the first event.
	stray      []byte
	dispatched bool
}

// maxStray bounds what Stray keeps: enough to quote the body and to find
// an error message in it.
const maxStray = 4 << 10

// NewEventStream returns an EventStream reading from r. now is called right after
// each Read returns (nil means time.Now).
func NewEventStream(r io.Reader, now func() time.Time) *EventStream {
	d := &EventStream{}
	d.Reset(r, now)
	return d
}

// Reset makes d read a new stream, keeping its buffers and size limit.
func (d *EventStream) Reset(r io.Reader, now func() time.Time) {
	d.rd.reset(r, now, false)
	*d = EventStream{rd: d.rd, data: d.data[:0], stray: d.stray[:0]}
}

// Stray returns the lines read before the first event that are not SSE
// fields (data, event, id, retry) or comments, joined by "\n" and cut at
// 4 KiB; nil once an event has been delivered. A body that is not an
// event stream at all (a JSON document, an HTML page) shows up here. It
// is valid until Reset.
func (d *EventStream) Stray() []byte {
	if d.dispatched || len(d.stray) == 0 {
		return nil
	}
	return d.stray
}

// SetMaxEventSize sets the limit on one event's size and on one line's
// (n <= 0 restores DefaultMaxEventSize). Call it before the first Next.
func (d *EventStream) SetMaxEventSize(n int) { d.rd.setMax(n) }

// Event returns the event Next just decoded.
func (d *EventStream) Event() Event { return d.ev }

// Err returns the first error other than io.EOF, or nil.
func (d *EventStream) Err() error { return d.rd.err }

// Truncated reports whether the stream ended inside an event or inside a
// line (no blank line after its last field). A truncated final event that
// had data is still delivered by Next.
func (d *EventStream) Truncated() bool { return d.rd.truncated }

// Next decodes the next event, reading as needed. It returns false at the
// end of the stream or on error (see Err).
func (d *EventStream) Next() bool {
	r := &d.rd
	if r.done || r.err != nil {
		return false
	}
	d.data, d.hasData, d.name = d.data[:0], false, ""
	return r.scan(d.bomChecked, d.processLine, d.finish)
}

// bomChecked reports whether lines may be read: once a leading BOM has
// been dropped or ruled out.
func (d *EventStream) bomChecked() bool { return d.bomDone || d.checkBOM() }

// checkBOM drops a leading BOM; it reports false while the bytes read so
// far could still be the start of one.
func (d *EventStream) checkBOM() bool {
	r := &d.rd
	b := r.buf[r.start:r.end]
	switch {
	case bytes.HasPrefix(b, bom):
		r.start += len(bom)
	case bytes.HasPrefix(bom, b) && !r.eof && r.readErr == nil:
		return false
	}
	d.bomDone = true
	return true
}

// processLine applies one line; it reports whether an event is ready.
func (d *EventStream) processLine(line []byte) bool {
	if len(line) == 0 {
		d.inEvent = false
		if d.hasData {
			d.dispatch()
			return true
		}
		d.name = ""
		return false
	}
	if line[0] == ':' {
		return false
	}
	d.inEvent = true
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		d.addData(value)
	case "event":
		if string(value) != d.lastName {
			d.lastName = string(value)
		}
		d.name = d.lastName
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != d.id {
			d.id = string(value)
		}
	case "retry":
		if ms, ok := parseDigits(value); ok {
			d.retry = time.Duration(ms) * time.Millisecond
		}
	default:
		d.addStray(line)
	}
	return false
}

// addStray keeps an unknown field line while no event has been delivered.
func (d *EventStream) addStray(line []byte) {
	if d.dispatched || len(d.stray) >= maxStray {
		return
	}
	if len(d.stray) > 0 {
		d.stray = append(d.stray, '\n')
	}
	d.stray = append(d.stray, line[:min(len(line), maxStray-len(d.stray))]...)
}

func (d *EventStream) addData(value []byte) {
	if d.hasData {
		d.data = append(d.data, '\n')
	}
	d.data = append(d.data, value...)
	d.hasData = true
	if len(d.data) > d.rd.max {
		d.rd.err = ErrTooLarge
	}
}

func (d *EventStream) dispatch() {
	d.dispatched = true
	d.ev = Event{Data: d.data, Event: d.name, ID: d.id, Retry: d.retry, At: d.rd.at}
}

// finish handles the end of input: a read error ends the stream as is; at
// EOF a pending partial line is applied and a pending event delivered.
func (d *EventStream) finish() bool {
	r := &d.rd
	r.done = true
	if r.readErr != nil {
		r.err = r.readErr
		return false
	}
	if rest := r.rest(); len(rest) > 0 {
		r.truncated = true
		if len(rest) > r.max {
			r.err = ErrTooLarge
			return false
		}
		d.processLine(rest)
		if r.err != nil {
			return false
		}
	}
	if d.inEvent {
		r.truncated = true
	}
	if d.hasData {
		d.dispatch()
		return true
	}
	return false
}

// parseDigits parses a retry value: ASCII digits only, no overflow.
func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
