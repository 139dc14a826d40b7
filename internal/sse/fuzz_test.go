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
		whole, wt, werr := decodeAll(t, bytes.NewReader(data), fuzzMax)
		split, st, serr := decodeAll(t, &splitReader{data: data, sizes: sizes}, fuzzMax)
		if !reflect.DeepEqual(whole, split) || wt != st || !sameErr(werr, serr) {
			t.Errorf("split reads changed the result:\nwhole %q %v %v\nsplit %q %v %v", whole, wt, werr, split, st, serr)
		}
	})
}

func FuzzNDJSON(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		whole, wt, werr := ndjsonAll(bytes.NewReader(data), fuzzMax)
		split, st, serr := ndjsonAll(&splitReader{data: data, sizes: sizes}, fuzzMax)
		if !reflect.DeepEqual(whole, split) || wt != st || !sameErr(werr, serr) {
			t.Errorf("split reads changed the result:\nwhole %q %v %v\nsplit %q %v %v", whole, wt, werr, split, st, serr)
		}
	})
}

func sameErr(a, b error) bool { return errors.Is(a, b) && errors.Is(b, a) }
