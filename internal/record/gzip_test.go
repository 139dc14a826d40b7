package record

import (
	"bytes"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// records50 is a 50-token record like a soak's: one chunk per token.
func records50(id int64) *Record {
	r := sample(id)
	r.Chunks = nil
	for i := range 50 {
		r.Chunks = append(r.Chunks, Chunk{AtNS: 200_000_000 + int64(i)*50_123_457 + id%977, Tokens: 1})
	}
	r.OutputTokens, r.EndNS = 50, r.SentNS+r.Chunks[49].AtNS
	return r
}

// TestGzipRoundTrip: records written compressed are read back by the same
// NewReader as plain ones, unchanged; with a flush due at every record,
// each is in the stream the moment it is written, not when the writer is
// closed.
func TestGzipRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewGzipWriter(&buf)
	w.w.(*flushingWriter).every = 0
	var in []*Record
	for i := range 200 {
		r := records50(int64(i))
		in = append(in, r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := readAll(t, bytes.NewReader(buf.Bytes()), true); len(got) != len(in) {
		t.Fatalf("before Close: %d records readable, want all %d", len(got), len(in))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	pw := NewWriter(&plain)
	for _, r := range in {
		pw.Write(r)
	}
	if got := readAll(t, bytes.NewReader(buf.Bytes()), false); !reflect.DeepEqual(got, in) {
		t.Error("records changed through gzip")
	}
	if buf.Len()*3 > plain.Len() {
		t.Errorf("compressed %d bytes of %d: less than 3 times smaller", buf.Len(), plain.Len())
	}
}

// TestGzipCutShort: a killed run's compressed file ends mid-stream; a
// lenient read keeps every whole record and counts the end as a damaged
// line, a strict one says the stream was cut short.
func TestGzipCutShort(t *testing.T) {
	var buf bytes.Buffer
	w := NewGzipWriter(&buf)
	w.w.(*flushingWriter).every = 0
	for i := range 10 {
		w.Write(records50(int64(i)))
	}
	b := buf.Bytes()
	cut := b[:len(b)-5] // within the last record's flush
	rd := NewReader(bytes.NewReader(cut))
	rd.SkipDamaged()
	n := 0
	for rd.Next() {
		n++
	}
	if rd.Err() != nil || n < 9 || len(rd.Damaged()) != 1 || !strings.Contains(rd.Damaged()[0].Error(), "cut short") {
		t.Errorf("lenient: %d records, err %v, damaged %v", n, rd.Err(), rd.Damaged())
	}
	rd = NewReader(bytes.NewReader(cut))
	for rd.Next() {
	}
	if err := rd.Err(); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("strict: %v, want the stream cut short", err)
	}
}

// TestGzipBadHeader: bytes that open like gzip but are not say so.
func TestGzipBadHeader(t *testing.T) {
	rd := NewReader(strings.NewReader("\x1f\x8bnot gzip at all"))
	if rd.Next() || rd.Err() == nil || !strings.Contains(rd.Err().Error(), "gzip") {
		t.Errorf("got %v", rd.Err())
	}
}

func readAll(t *testing.T, r io.Reader, lenient bool) []*Record {
	t.Helper()
	rd := NewReader(r)
	if lenient {
		rd.SkipDamaged()
	}
	var out []*Record
	for rd.Next() {
		r := *rd.Record()
		out = append(out, &r)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkWriteGzip: the client's cost of writing a 50-token record,
// plain and compressed, with the bytes each takes on disk; the records'
// times vary as measured ones do, which is what compresses least.
func BenchmarkWriteGzip(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	recs := make([]*Record, 1024)
	for i := range recs {
		r := records50(int64(i))
		r.SentNS = rng.Int64N(1e12)
		at := int64(200_000_000 + rng.Int64N(10_000_000))
		for j := range r.Chunks {
			r.Chunks[j].AtNS = at
			at += 45_000_000 + rng.Int64N(10_000_000)
		}
		recs[i] = r
	}
	for _, c := range []struct {
		name string
		new  func(io.Writer) *Writer
	}{{"plain", NewWriter}, {"gzip", NewGzipWriter}} {
		b.Run(c.name, func(b *testing.B) {
			var n countWriter
			w := c.new(&n)
			i := 0
			for b.Loop() {
				if err := w.Write(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			w.Close()
			b.ReportMetric(float64(n)/float64(b.N), "bytes/record")
		})
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
