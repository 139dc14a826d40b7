package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Writer appends records as JSON lines. Each record is written with a single
// Write call the moment it is handed over, so a crash or kill loses nothing
// already written. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	err error
}

// NewWriter returns a Writer appending to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write encodes r as one line and writes it. After the first failure every
// call returns that error.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	if err := encode(&w.buf, r); err != nil {
		return fmt.Errorf("encoding record %d: %w", r.ID, err)
	}
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		w.err = fmt.Errorf("writing record %d: %w", r.ID, err)
		return w.err
	}
	return nil
}

// encode appends r and a newline to buf exactly as encoding/json's Encoder
// (HTML escaping off) would. The chunks, most of a record's bytes and all
// of its per-token cost under reflection, are written by hand; the rest of
// the record is encoded without them and the members that follow them are
// appended after (TestEncodeMatchesEncodingJSON holds the bytes equal).
func encode(buf *bytes.Buffer, r *Record) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	head := *r
	head.Chunks, head.Server, head.Error = nil, nil, nil
	if err := enc.Encode(&head); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - len("}\n"))
	if len(r.Chunks) > 0 {
		b := buf.AvailableBuffer()
		b = append(b, `,"chunks":[`...)
		for i, c := range r.Chunks {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(append(b, `{"t":`...), c.AtNS, 10)
			b = strconv.AppendInt(append(b, `,"n":`...), int64(c.Tokens), 10)
			if c.Reasoning {
				b = append(b, `,"r":true`...)
			}
			b = append(b, '}')
		}
		buf.Write(append(b, ']'))
	}
	for _, m := range []struct {
		key string
		v   any
		ok  bool
	}{{`,"server":`, r.Server, r.Server != nil}, {`,"error":`, r.Error, r.Error != nil}} {
		if !m.ok {
			continue
		}
		buf.WriteString(m.key)
		if err := enc.Encode(m.v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteString("}\n")
	return nil
}

// MaxLine bounds one record's line; a longer line is reported, not read
// into memory without limit.
const MaxLine = 64 << 20

// Reader reads records from JSON lines, skipping blank lines. By default
// it stops at the first line that is not a valid record; after SkipDamaged
// it passes over such lines and lists them in Damaged.
type Reader struct {
	s       *bufio.Scanner
	line    int
	rec     Record
	err     error
	skip    bool
	damaged []*LineError
}

// LineError is a line that holds no valid record.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// SkipDamaged makes the reader pass over lines that are not valid records
// (a crash leaves a truncated last line) instead of stopping at the first.
func (r *Reader) SkipDamaged() { r.skip = true }

// Damaged returns the lines passed over after SkipDamaged, in file order.
func (r *Reader) Damaged() []*LineError { return r.damaged }

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &Reader{s: s}
}

// Next reads the next record; it returns false at the end or on error.
func (r *Reader) Next() bool {
	for r.err == nil && r.s.Scan() {
		r.line++
		b := bytes.TrimSpace(r.s.Bytes())
		if len(b) == 0 {
			continue
		}
		r.rec = Record{}
		err := decode(b, &r.rec)
		if err != nil {
			err = fmt.Errorf("not a record: %w", err)
		} else {
			err = r.rec.validate()
		}
		if err == nil {
			return true
		}
		le := &LineError{Line: r.line, Err: err}
		if !r.skip {
			r.err = le
			return false
		}
		r.damaged = append(r.damaged, le)
	}
	if r.err == nil {
		if err := r.s.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("a line longer than %d bytes", MaxLine)
			}
			r.err = fmt.Errorf("line %d: %w", r.line+1, err)
		}
	}
	return false
}

// Record returns the current record, valid until the next call to Next.
func (r *Reader) Record() *Record { return &r.rec }

// Err returns the first error met, naming its line.
func (r *Reader) Err() error { return r.err }

// validate rejects records whose numbers cannot be from a real run.
func (r *Record) validate() error {
	if r.Schema != "" && r.Schema != Schema {
		return fmt.Errorf("unknown record schema %q (want %q)", r.Schema, Schema)
	}
	if r.Phase != PhaseWarmup && r.Phase != PhaseMeasured {
		return fmt.Errorf("record %d: phase %q is neither %q nor %q", r.ID, r.Phase, PhaseWarmup, PhaseMeasured)
	}
	if r.EndNS < r.SentNS || (r.FirstTokenNS != 0 && (r.FirstTokenNS < r.SentNS || r.FirstTokenNS > r.EndNS)) {
		return fmt.Errorf("record %d: instants out of order (sent %d, first token %d, end %d)", r.ID, r.SentNS, r.FirstTokenNS, r.EndNS)
	}
	if r.OutputTokens < 0 || r.PromptTokens < 0 {
		return fmt.Errorf("record %d: negative token count", r.ID)
	}
	for i, c := range r.Chunks {
		if c.Tokens < 0 || (i > 0 && c.AtNS < r.Chunks[i-1].AtNS) {
			return fmt.Errorf("record %d: chunk %d out of order or negative", r.ID, i)
		}
	}
	return nil
}
