package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// DefaultTraceBlockSize is the tokens per hash id of a Mooncake trace: the
// block size its published traces were cut with.
const DefaultTraceBlockSize = 512

// maxTraceLine bounds one line of a trace file: a Mooncake line of a
// million-token prompt (2,000 ids) is about 16 KB, so a longer line is a
// damaged file, not a request, and must not be read whole into memory.
const maxTraceLine = 1 << 20

// TraceRequest is one request of a trace file.
type TraceRequest struct {
	// Line is the request's line in the file, from 1.
	Line int64
	// At is the request's time from the file's own zero: Mooncake's
	// timestamp, BurstGPT's seconds, Azure's date and time since the
	// Unix epoch.
	At time.Duration
	// Input and Output are its prompt and output lengths in tokens.
	Input, Output int
	// HashIDs name the prompt's blocks, one per block of the trace's
	// block size (Mooncake); nil in the other formats.
	HashIDs []int64
	// Labels are the trace's own columns kept as they are (BurstGPT's
	// model and log type), "column=value".
	Labels []string
}

// TraceReader reads a trace file one request at a time, checking each
// (docs/WORKLOADS.md, "Trace replay"): it never holds more than a line.
type TraceReader struct {
	Path, Format string
	f            io.Closer
	rows         traceRows
	last         time.Duration
	started      bool
	// Skipped counts rows left out for a zero length; SkippedLine is the
	// first one's line.
	Skipped     int
	SkippedLine int64
}

// traceRows reads a format's rows; io.EOF at the end.
type traceRows interface {
	next() (TraceRequest, error)
}

// TraceError is a trace file's line that cannot be replayed.
type TraceError struct {
	Path string
	Line int64
	Err  error
}

func (e *TraceError) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}
func (e *TraceError) Unwrap() error { return e.Err }

// OpenTrace opens a trace file in format (record.TraceMooncake, TraceAzure,
// TraceBurstGPT, or "" to tell by its first line).
func OpenTrace(path, format string) (*TraceReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t, err := NewTraceReader(f, path, format)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.f = f
	return t, nil
}

// NewTraceReader reads a trace from r; path names it in errors.
func NewTraceReader(r io.Reader, path, format string) (*TraceReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if format == "" {
		var err error
		if format, err = detectTrace(br); err != nil {
			return nil, &TraceError{Path: path, Line: 1, Err: err}
		}
	}
	t := &TraceReader{Path: path, Format: format}
	var err error
	switch format {
	case record.TraceMooncake:
		t.rows = &mooncakeRows{lines: newLines(br)}
	case record.TraceAzure:
		t.rows, err = newAzureRows(br)
	case record.TraceBurstGPT:
		t.rows, err = newBurstRows(br)
	default:
		return nil, fmt.Errorf("trace format %q: want %s, %s or %s (or leave it out to tell by content)",
			format, record.TraceMooncake, record.TraceAzure, record.TraceBurstGPT)
	}
	if err != nil {
		return nil, wrapTrace(path, err)
	}
	return t, nil
}

// detectTrace tells a trace's format by its first line: a JSON object is
// Mooncake's; a CSV header names Azure's or BurstGPT's columns.
func detectTrace(br *bufio.Reader) (string, error) {
	head, _ := br.Peek(4096)
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(head) == 0 {
		return "", errors.New("the trace is empty")
	}
	if head[0] == '{' {
		return record.TraceMooncake, nil
	}
	first, _, _ := strings.Cut(string(head), "\n")
	low := strings.ToLower(first)
	switch {
	case strings.Contains(low, "contexttokens"):
		return record.TraceAzure, nil
	case strings.Contains(low, "request tokens"):
		return record.TraceBurstGPT, nil
	}
	return "", fmt.Errorf("cannot tell the trace's format from its first line %q: a Mooncake trace is JSON Lines, an Azure or BurstGPT trace a CSV file with its header; or give --trace-format",
		clip(first, 40))
}

// Next returns the next request, io.EOF at the end. Rows with a zero
// length are skipped and counted; a negative or unsorted time, a negative
// length or a damaged line is a *TraceError naming the line.
func (t *TraceReader) Next() (TraceRequest, error) {
	for {
		r, err := t.rows.next()
		if err != nil {
			if err == io.EOF {
				return r, err
			}
			return r, wrapTrace(t.Path, err)
		}
		if err := t.check(r); err != nil {
			return r, &TraceError{Path: t.Path, Line: r.Line, Err: err}
		}
		if r.Input == 0 || r.Output == 0 {
			if t.Skipped == 0 {
				t.SkippedLine = r.Line
			}
			t.Skipped++
			continue
		}
		return r, nil
	}
}

func (t *TraceReader) check(r TraceRequest) error {
	switch {
	case r.At < 0:
		return fmt.Errorf("negative timestamp (%v)", r.At)
	case t.started && r.At < t.last:
		return fmt.Errorf("timestamp %v is before the previous request's (%v): the trace must be sorted by time (sort it first, e.g. with sort or pandas)", r.At, t.last)
	case r.Input < 0 || r.Output < 0:
		return fmt.Errorf("negative length (input %d, output %d)", r.Input, r.Output)
	}
	t.started, t.last = true, r.At
	return nil
}

// Close closes the file.
func (t *TraceReader) Close() error {
	if t.f == nil {
		return nil
	}
	return t.f.Close()
}

// wrapTrace names path in err unless it names it already.
func wrapTrace(path string, err error) error {
	var te *TraceError
	if errors.As(err, &te) {
		if te.Path == "" {
			te.Path = path
		}
		return te
	}
	return &TraceError{Path: path, Err: err}
}

// lines reads a file's lines one at a time, numbered from 1, refusing a
// line longer than maxTraceLine.
type lines struct {
	br *bufio.Reader
	n  int64
	// buf holds a line that did not fit the reader's buffer.
	buf []byte
}

func newLines(br *bufio.Reader) *lines { return &lines{br: br} }

// next returns the next non-blank line, without its end; io.EOF at the
// end. The slice is valid until the next call.
func (l *lines) next() ([]byte, error) {
	for {
		line, err := l.read()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (l *lines) read() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(frag) > maxTraceLine {
			l.n++
			return nil, &TraceError{Line: l.n, Err: fmt.Errorf("line longer than %d bytes: not a trace line (is the file a trace?)", maxTraceLine)}
		}
		switch {
		case err == bufio.ErrBufferFull:
			l.buf = append(l.buf, frag...)
			continue
		case err == io.EOF && len(l.buf)+len(frag) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, err
		}
		l.n++
		if len(l.buf) > 0 {
			l.buf = append(l.buf, frag...)
			frag = l.buf
		}
		return bytes.TrimRight(frag, "\r\n"), nil
	}
}

// clip shortens s to n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
