package record

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"time"
)

// Compressed records. A records file may be gzip-compressed
// (records.jsonl.gz, run --compress gzip): the same JSON lines, a few
// times smaller. Every reader opens either through NewReader, which tells
// them apart by gzip's magic number, so no reader names the compression.

// gzipMagic opens every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// maybeGunzip returns r decompressed when it opens with gzip's magic
// number, else r as it is.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(gzipMagic))
	if err != nil || head[0] != gzipMagic[0] || head[1] != gzipMagic[1] {
		return br, nil // short or plain: the line reader says what it is
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("gzip-compressed records: %w", err)
	}
	return zr, nil
}

// cutShort reports whether err is a compressed stream that ends before its
// end: a run killed while writing, whose last records are lost.
func cutShort(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }

// NewGzipWriter returns a Writer appending gzip-compressed records to w.
// The stream is flushed to w when a record is written gzipFlushEvery or
// more after the last flush, and by Close: a run killed outright (SIGKILL,
// power) loses the records of its last second, which an uncompressed one
// would not; an interrupted run (Ctrl-C) loses nothing.
func NewGzipWriter(w io.Writer) *Writer {
	zw, _ := gzip.NewWriterLevel(w, gzipLevel)
	return &Writer{w: &flushingWriter{zw: zw, every: gzipFlushEvery}, close: zw.Close}
}

// gzipLevel is gzip's fastest: 4 to 5 times smaller records for a tenth
// of the client's CPU per chunk; the default level saves a further 15% of
// the bytes at twice the CPU (docs/PERFORMANCE.md).
const gzipLevel = gzip.BestSpeed

// gzipFlushEvery bounds what a killed run loses of its compressed records.
// Flushing every record would keep them all, at three times the CPU of
// compressing them (a deflate block each).
const gzipFlushEvery = time.Second

// flushingWriter flushes the gzip stream every so often.
type flushingWriter struct {
	zw    *gzip.Writer
	every time.Duration
	last  time.Time
}

func (f *flushingWriter) Write(p []byte) (int, error) {
	n, err := f.zw.Write(p)
	if now := time.Now(); err == nil && now.Sub(f.last) >= f.every {
		err, f.last = f.zw.Flush(), now
	}
	return n, err
}

// Close ends what the Writer wrote (a compressed stream's trailer); it
// does not close the underlying writer. A plain Writer has nothing to end.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.close == nil {
		return nil
	}
	err := w.close()
	w.close = nil
	return err
}
