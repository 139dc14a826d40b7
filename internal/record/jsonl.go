package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/servebench/servebench/internal/jsonenc"
)

// Writer appends records as JSON lines. Each record is written with a single
// Write call the moment it is handed over, so a crash or kill loses nothing
// already written. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
	// close ends a compressed stream (gzip.go); nil for plain lines.
	close func() error
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
	var err error
	if w.buf, err = encode(w.buf[:0], r); err != nil {
		return fmt.Errorf("encoding record %d: %w", r.ID, err)
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("writing record %d: %w", r.ID, err)
		return w.err
	}
	return nil
}

// encode appends r and a newline to b exactly as encoding/json's Encoder
// (HTML escaping off) would, written by hand: by reflection the record's
// encoding was most of the client's CPU per request after the stream
// itself. TestEncodeMatchesEncodingJSON and FuzzEncode hold the bytes
// equal, and TestEncodeEveryField fails when a field is added to a struct
// and not here.
func encode(b []byte, r *Record) ([]byte, error) {
	b = str(append(b, `{"schema":`...), r.Schema)
	b = strconv.AppendInt(append(b, `,"point":`...), int64(r.Point), 10)
	b = append(b, `,"load":{`...)
	n := len(b)
	b = optStr(b, `,"workload":`, r.Load.Workload)
	b = optInt(b, `,"concurrency":`, int64(r.Load.Concurrency))
	if r.Load.Rate != 0 {
		var err error
		if b, err = jsonenc.Float(append(b, `,"rate":`...), r.Load.Rate); err != nil {
			return b, err
		}
	}
	b = optInt(b, `,"max_concurrency":`, int64(r.Load.MaxConcurrency))
	b = dropComma(b, n)
	b = strconv.AppendInt(append(b, `},"id":`...), r.ID, 10)
	b = str(append(b, `,"phase":`...), r.Phase)
	b = str(append(b, `,"api":`...), r.API)
	b = optStr(b, `,"model":`, r.Model)
	b = optInt(b, `,"session":`, int64(r.Session))
	b = optInt(b, `,"turn":`, int64(r.Turn))
	b = optInt(b, `,"trace_line":`, r.TraceLine)
	b = strconv.AppendInt(append(b, `,"prompt_tokens_requested":`...), int64(r.PromptTokensRequested), 10)
	b = strconv.AppendInt(append(b, `,"output_tokens_requested":`...), int64(r.OutputTokensRequested), 10)
	b = strconv.AppendInt(append(b, `,"prompt_tokens":`...), int64(r.PromptTokens), 10)
	b = str(append(b, `,"prompt_tokens_source":`...), r.PromptTokensSource)
	b = strconv.AppendInt(append(b, `,"output_tokens":`...), int64(r.OutputTokens), 10)
	b = str(append(b, `,"output_tokens_source":`...), r.OutputTokensSource)
	b = optInt(b, `,"reasoning_tokens":`, int64(r.ReasoningTokens))
	b = optStr(b, `,"finish_reason":`, r.FinishReason)
	b = strconv.AppendInt(append(b, `,"scheduled_ns":`...), r.ScheduledNS, 10)
	b = strconv.AppendInt(append(b, `,"sent_ns":`...), r.SentNS, 10)
	b = optInt(b, `,"first_token_ns":`, r.FirstTokenNS)
	b = optInt(b, `,"first_output_ns":`, r.FirstOutputNS)
	b = strconv.AppendInt(append(b, `,"end_ns":`...), r.EndNS, 10)
	if len(r.Chunks) > 0 {
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
		b = append(b, ']')
	}
	if t := r.Server; t != nil {
		b = append(b, `,"server":{`...)
		n = len(b)
		b = optInt(b, `,"prompt_eval_count":`, int64(t.PromptEvalCount))
		b = optInt(b, `,"prompt_eval_duration_ns":`, t.PromptEvalDuration)
		b = optInt(b, `,"eval_count":`, int64(t.EvalCount))
		b = optInt(b, `,"eval_duration_ns":`, t.EvalDuration)
		b = optInt(b, `,"load_duration_ns":`, t.LoadDuration)
		b = optInt(b, `,"total_duration_ns":`, t.TotalDuration)
		if t.CachedTokens != nil {
			b = strconv.AppendInt(append(b, `,"cached_tokens":`...), int64(*t.CachedTokens), 10)
		}
		b = append(dropComma(b, n), '}')
	}
	if e := r.Error; e != nil {
		b = str(append(b, `,"error":{"class":`...), e.Class)
		b = str(append(b, `,"message":`...), e.Message)
		b = optInt(b, `,"status":`, int64(e.Status))
		b = optStr(b, `,"retry_after":`, e.RetryAfter)
		b = append(b, '}')
	}
	return append(b, "}\n"...), nil
}

// str appends s as a JSON string, HTML escaping off, as the Encoder writes it.
func str(b []byte, s string) []byte { return jsonenc.String(b, s, false) }

// optStr and optInt append a member that omitempty leaves out when zero;
// key starts with its comma.
func optStr(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return str(append(b, key...), s)
}

func optInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), n, 10)
}

// dropComma removes the comma that the first member of an object of
// optional members was written with, at b[n].
func dropComma(b []byte, n int) []byte {
	if len(b) > n && b[n] == ',' {
		return append(b[:n], b[n+1:]...)
	}
	return b
}

// MaxLine bounds one record's line; a longer line is reported, not read
// into memory without limit.
const MaxLine = 64 << 20

// Reader reads records from JSON lines, skipping blank lines. By default
// it stops at the first line that is not a valid record; after SkipDamaged
// it passes over such lines and lists them in Damaged. A record whose id an
// earlier line holds is dropped and listed in Duplicates.
type Reader struct {
	s       *bufio.Scanner
	line    int
	rec     Record
	err     error
	skip    bool
	damaged []*LineError
	// seen, dups, points and first: recover.go
	seen   ids
	dups   []Duplicate
	points map[int]*PointClient
	first  *Target
}

// LineError is a line that holds no valid record.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Hint says how the command line reads past a damaged line.
func (e *LineError) Hint() string {
	return "without --strict, report skips damaged lines with a warning"
}

// SkipDamaged makes the reader pass over lines that are not valid records
// (a crash leaves a truncated last line) instead of stopping at the first.
func (r *Reader) SkipDamaged() { r.skip = true }

// Damaged returns the lines passed over after SkipDamaged, in file order.
func (r *Reader) Damaged() []*LineError { return r.damaged }

// NewReader returns a Reader over r, plain or gzip-compressed (gzip.go).
func NewReader(r io.Reader) *Reader {
	r, err := maybeGunzip(r)
	if err != nil {
		return &Reader{err: err, s: bufio.NewScanner(eofReader{})}
	}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &Reader{s: s}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

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
			if !r.keep(&r.rec) {
				continue // a duplicate, dropped
			}
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
			if cutShort(err) {
				err = fmt.Errorf("compressed stream cut short (a killed run): %w", err)
			}
			if cutShort(err) && r.skip {
				// A killed run's compressed file: its last line is damaged.
				r.damaged = append(r.damaged, &LineError{Line: r.line + 1, Err: errors.New("compressed stream cut short (a killed run)")})
				return false
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
