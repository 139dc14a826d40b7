package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// splitReader delivers data in pieces whose sizes come from sizes (cycled),
// the way a network delivers a stream at arbitrary boundaries.
type splitReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(s.sizes) > 0 {
		n = 1 + int(s.sizes[s.i%len(s.sizes)])%23
		s.i++
	}
	n = copy(p, s.data[:min(n, len(s.data))])
	s.data = s.data[n:]
	return n, nil
}

// fuzzMax is small so that the size limit is exercised too.
const fuzzMax = 256

func seeds(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"\xef\xbb\xbfevent: e\r\nid: 1\r\nretry: 10\r\ndata: x\r\n\r\n",
		"data: a\rdata: b\r\r: c\ndata\n\n{\"x\":1}\n",
		"data: x\n\ndata: cut",
		"{\"response\":\"a\",\"done\":false}\n{\"done\":true}",
	} {
		f.Add([]byte(s), []byte{0, 5, 1})
	}
}

func FuzzDecoder(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		checkSplit(t, func() Decoder { return NewEventStream(nil, nil) }, data, sizes)
	})
}

func FuzzNDJSON(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		checkSplit(t, func() Decoder { return NewNDJSON(nil, nil) }, data, sizes)
	})
}

// checkSplit holds a decoder to reading the same events, truncation,
// stray text and error whatever the boundaries of the reads.
func checkSplit(t *testing.T, newDecoder func() Decoder, data, sizes []byte) {
	whole := readAll(newDecoder(), bytes.NewReader(data))
	split := readAll(newDecoder(), &splitReader{data: data, sizes: sizes})
	if !reflect.DeepEqual(whole.events, split.events) || whole.truncated != split.truncated ||
		whole.stray != split.stray || !sameErr(whole.err, split.err) {
		t.Errorf("split reads changed the result:\nwhole %+v\nsplit %+v", whole, split)
	}
}

// decoded is everything a Decoder said about one stream.
type decoded struct {
	events    []got
	truncated bool
	stray     string
	err       error
}

func readAll(d Decoder, r io.Reader) decoded {
	d.SetMaxEventSize(fuzzMax)
	d.Reset(r, nil)
	var out decoded
	for d.Next() {
		e := d.Event()
		out.events = append(out.events, got{string(e.Data), e.Event, e.ID, e.Retry})
	}
	out.truncated, out.stray, out.err = d.Truncated(), string(d.Stray()), d.Err()
	return out
}

func sameErr(a, b error) bool { return errors.Is(a, b) && errors.Is(b, a) }
