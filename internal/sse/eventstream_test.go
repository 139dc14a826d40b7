package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// got is an Event with its Data copied, for comparisons.
type got struct {
	Data  string
	Event string
	ID    string
	Retry time.Duration
}

func decodeAll(t testing.TB, r io.Reader, max int) (evs []got, truncated bool, err error) {
	d := NewEventStream(r, nil)
	d.SetMaxEventSize(max)
	for d.Next() {
		e := d.Event()
		evs = append(evs, got{string(e.Data), e.Event, e.ID, e.Retry})
	}
	return evs, d.Truncated(), d.Err()
}

func TestDecoder(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []got
		truncated bool
	}{
		// The OpenAI shape: one data line per event.
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []got{{Data: `{"a":1}`}, {Data: "[DONE]"}}, false},
		// Several data lines join with "\n"; only one leading space is cut.
		{"multiline", "data:a\ndata:  b\n\n", []got{{Data: "a\n b"}}, false},
		// "\r\n" and bare "\r" line endings.
		{"crlf", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []got{{Data: "a"}, {Data: "b"}, {Data: "c"}}, false},
		// Comments and unknown fields are ignored; a field without a colon
		// has an empty value.
		{"comments", ": keep-alive\nfoo: bar\ndata\n\n", []got{{Data: ""}}, false},
		// An event with no data line is not dispatched, and its type does not
		// leak into the next event.
		{"no data", "event: ping\n\ndata: x\n\n", []got{{Data: "x"}}, false},
		// Event type, id (persisting) and retry.
		{"fields", "event: error\nid: 7\nretry: 1500\ndata: x\n\ndata: y\n\n",
			[]got{{"x", "error", "7", 1500 * time.Millisecond}, {"y", "", "7", 1500 * time.Millisecond}}, false},
		// A bad retry value is ignored.
		{"bad retry", "retry: 1s\ndata: x\n\n", []got{{Data: "x"}}, false},
		// A leading BOM is dropped; a second one is data.
		{"bom", "\xef\xbb\xbfdata: x\n\n", []got{{Data: "x"}}, false},
		// A final event without its blank line is delivered but flagged.
		{"no final blank", "data: x\n\ndata: y", []got{{Data: "x"}, {Data: "y"}}, true},
		{"no final blank 2", "data: x\n\ndata: y\n", []got{{Data: "x"}, {Data: "y"}}, true},
		// A trailing comment line ends cleanly; a cut one does not.
		{"trailing comment", "data: x\n\n: bye\n", []got{{Data: "x"}}, false},
		{"cut comment", "data: x\n\n: by", []got{{Data: "x"}}, true},
		// Empty input.
		{"empty", "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, truncated, err := decodeAll(t, strings.NewReader(tt.in), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(evs, tt.want) {
				t.Errorf("got %q, want %q", evs, tt.want)
			}
			if truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", truncated, tt.truncated)
			}
		})
	}
}

func TestDecoderTooLarge(t *testing.T) {
	// One long line, and many short data lines adding up.
	for _, in := range []string{"data: " + strings.Repeat("x", 100) + "\n\n", strings.Repeat("data: xxxxxxxxxx\n", 20) + "\n"} {
		evs, _, err := decodeAll(t, strings.NewReader("data: ok\n\n"+in), 64)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
		if len(evs) != 1 {
			t.Errorf("got %d events before the error, want 1", len(evs))
		}
	}
}

// stepReader delivers scripted pieces, one per Read, and advances a fake
// clock by one second per Read.
type stepReader struct {
	pieces []string
	clock  *time.Time
}

func (s *stepReader) Read(p []byte) (int, error) {
	if len(s.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.pieces[0])
	s.pieces[0] = s.pieces[0][n:]
	if s.pieces[0] == "" {
		s.pieces = s.pieces[1:]
	}
	*s.clock = s.clock.Add(time.Second)
	return n, nil
}

func TestDecoderAt(t *testing.T) {
	// Each event is stamped with the read that delivered its blank line,
	// and is returned as soon as that read returns (no read-ahead).
	var clock time.Time
	r := &stepReader{pieces: []string{"data: a\n", "\ndata: b\n\ndata: c\r", "\n\r", "\ndata: d\n\n"}, clock: &clock}
	d := NewEventStream(r, func() time.Time { return clock })
	var at []int
	for d.Next() {
		at = append(at, int(d.Event().At.Sub(time.Time{})/time.Second))
		if got, want := int(clock.Sub(time.Time{})/time.Second), at[len(at)-1]; got != want {
			t.Errorf("event %q returned after read %d, want right after read %d", d.Event().Data, got, want)
		}
	}
	if want := []int{2, 2, 3, 4}; !reflect.DeepEqual(at, want) {
		t.Errorf("At = %v, want %v", at, want)
	}
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("reset")
	d := NewEventStream(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotestErr{boom}), nil)
	n := 0
	for d.Next() {
		n++
	}
	if n != 1 || !errors.Is(d.Err(), boom) {
		t.Errorf("got %d events, err %v; want 1, %v", n, d.Err(), boom)
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

func TestDecoderReset(t *testing.T) {
	d := NewEventStream(strings.NewReader("id: 1\ndata: a\n\n"), nil)
	for d.Next() {
	}
	d.Reset(strings.NewReader("data: b\n\n"), nil)
	if !d.Next() || string(d.Event().Data) != "b" || d.Event().ID != "" {
		t.Errorf("after Reset got %+v", d.Event())
	}
}

func TestDecoderStray(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// A JSON document sent as text/event-stream has no SSE field.
		{"json", `{"choices":[{"message":{"content":"hi"}}]}`, `{"choices":[{"message":{"content":"hi"}}]}`},
		{"pretty json", "{\n  \"a\": 1\n}\n", "{\n  \"a\": 1\n}"},
		// Known fields and comments are not stray.
		{"comments only", ": ping\n\nid: 1\n\n", ""},
		// Once an event arrived, earlier stray lines no longer matter.
		{"then event", "foo: bar\ndata: x\n\n", ""},
		// The kept text is bounded.
		{"long", strings.Repeat("x", 3*maxStray), strings.Repeat("x", maxStray)},
	}
	for _, tt := range tests {
		d := NewEventStream(strings.NewReader(tt.in), nil)
		for d.Next() {
		}
		if got := string(d.Stray()); got != tt.want {
			t.Errorf("%s: Stray() = %q, want %q", tt.name, clipForLog(got), clipForLog(tt.want))
		}
	}
}

func clipForLog(s string) string { return s[:min(len(s), 80)] }

// oneEventPerRead hands out one event per Read, as a paced stream's
// socket does.
type oneEventPerRead struct{ left int }

func (r *oneEventPerRead) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	r.left--
	return copy(p, "data: {\"choices\":[{\"delta\":{\"content\":\" tok\"}}]}\n\n"), nil
}

// TestBufferSize: a paced stream keeps the small initial buffer (a run
// holds thousands of them); one whose reads fill the buffer gets a larger
// one, up to burstBufSize, kept for the decoder's next stream.
func TestBufferSize(t *testing.T) {
	d := NewEventStream(&oneEventPerRead{left: 500}, nil)
	n := 0
	for d.Next() {
		n++
	}
	if n != 500 || len(d.rd.buf) != initialBufSize {
		t.Errorf("%d events, buffer %d bytes after a paced stream; want 500 and %d", n, len(d.rd.buf), initialBufSize)
	}
	burst := strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\" tok\"}}]}\n\n", 2000)
	d.Reset(strings.NewReader(burst), nil) // each read fills the buffer
	for n = 0; d.Next(); n++ {
	}
	if n != 2000 || len(d.rd.buf) != burstBufSize {
		t.Errorf("%d events, buffer %d bytes after a burst; want 2000 and %d", n, len(d.rd.buf), burstBufSize)
	}
	d.Reset(strings.NewReader("data: a\n\n"), nil)
	if len(d.rd.buf) != burstBufSize {
		t.Errorf("buffer %d bytes after Reset, want the burst's %d kept", len(d.rd.buf), burstBufSize)
	}
}

// dropsFraming returns 15 of every 16 bytes it could, as a reader that
// decodes HTTP's chunked coding into the caller's buffer does.
type dropsFraming struct{ r io.Reader }

func (d dropsFraming) Read(p []byte) (int, error) {
	if len(p) > 16 {
		p = p[:len(p)-len(p)/16]
	}
	return d.r.Read(p)
}

// TestBufferGrowsUnderFraming: reads that come back nearly full grow the
// buffer too.
func TestBufferGrowsUnderFraming(t *testing.T) {
	burst := strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\" tok\"}}]}\n\n", 2000)
	d := NewEventStream(dropsFraming{strings.NewReader(burst)}, nil)
	for d.Next() {
	}
	if len(d.rd.buf) != burstBufSize {
		t.Errorf("buffer %d bytes after a burst read through framing, want %d", len(d.rd.buf), burstBufSize)
	}
}
