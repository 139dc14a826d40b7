package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// mooncakeRows reads Mooncake's JSON Lines: {"timestamp": ms,
// "input_length": n, "output_length": n, "hash_ids": [ids]}.
type mooncakeRows struct{ lines *lines }

type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
}

func (m *mooncakeRows) next() (TraceRequest, error) {
	line, err := m.lines.next()
	if err != nil {
		return TraceRequest{}, err
	}
	n := m.lines.n
	var v mooncakeLine
	if err := json.Unmarshal(line, &v); err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: fmt.Errorf("not a Mooncake trace line (a JSON object with timestamp, input_length, output_length, hash_ids): %w", err)}
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"timestamp", v.Timestamp != nil}, {"input_length", v.InputLength != nil}, {"output_length", v.OutputLength != nil}} {
		if !f.ok {
			return TraceRequest{}, &TraceError{Line: n, Err: fmt.Errorf("missing %q", f.name)}
		}
	}
	at, err := seconds(*v.Timestamp / 1000)
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: fmt.Errorf("timestamp: %w", err)}
	}
	in, out, err := lengths(*v.InputLength, *v.OutputLength)
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: err}
	}
	return TraceRequest{Line: n, At: at, Input: in, Output: out, HashIDs: v.HashIDs}, nil
}

// maxTraceTokens bounds a length read from a trace: larger is a damaged
// field, not a prompt.
const maxTraceTokens = 1 << 30

func lengths(in, out int64) (int, int, error) {
	if in > maxTraceTokens || out > maxTraceTokens {
		return 0, 0, fmt.Errorf("length beyond %d tokens (input %d, output %d): not a request", maxTraceTokens, in, out)
	}
	return int(in), int(out), nil
}

// seconds converts s seconds to a duration, refusing what a duration
// cannot hold.
func seconds(s float64) (time.Duration, error) {
	if math.IsNaN(s) || math.IsInf(s, 0) || math.Abs(s) > 9e9 {
		return 0, fmt.Errorf("%v seconds is not a time", s)
	}
	return time.Duration(math.Round(s * 1e9)), nil
}

// csvRows reads a CSV trace by its header: columns are found by name
// (case and spaces aside), in any order.
type csvRows struct {
	lines  *lines
	cols   map[string]int // the wanted columns, by their names as given
	header map[string]int // every column, by columnKey
	width  int
}

// newCSVRows reads the header and finds want's columns in it.
func newCSVRows(br *bufio.Reader, format string, want ...string) (*csvRows, error) {
	c := &csvRows{lines: newLines(br), cols: map[string]int{}}
	head, err := c.lines.next()
	if err == io.EOF {
		return nil, errors.New("the trace is empty")
	}
	if err != nil {
		return nil, err
	}
	fields, err := splitCSV(bytes.TrimPrefix(head, []byte("\ufeff")))
	if err != nil {
		return nil, &TraceError{Line: c.lines.n, Err: err}
	}
	c.width = len(fields)
	c.header = map[string]int{}
	for i, f := range fields {
		c.header[columnKey(f)] = i
	}
	for _, w := range want {
		i, ok := c.header[columnKey(w)]
		if !ok {
			return nil, &TraceError{Line: c.lines.n, Err: fmt.Errorf("missing column %q: a %s trace's header has %s (this one has %s)",
				w, format, strings.Join(want, ", "), strings.Join(fields, ", "))}
		}
		c.cols[w] = i
	}
	return c, nil
}

func columnKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, "\" ")), " "))
}

// row returns the next row's fields and line.
func (c *csvRows) row() ([]string, int64, error) {
	line, err := c.lines.next()
	if err != nil {
		return nil, 0, err
	}
	fields, err := splitCSV(line)
	if err == nil && len(fields) < c.width {
		err = fmt.Errorf("%d fields, the header has %d", len(fields), c.width)
	}
	if err != nil {
		return nil, c.lines.n, &TraceError{Line: c.lines.n, Err: err}
	}
	return fields, c.lines.n, nil
}

// splitCSV splits one line; quotes are honoured within it (a trace's
// fields hold no line breaks).
func splitCSV(line []byte) ([]string, error) {
	if bytes.IndexByte(line, '"') < 0 {
		return strings.Split(string(line), ","), nil
	}
	r := csv.NewReader(bytes.NewReader(line))
	r.FieldsPerRecord = -1
	return r.Read()
}

// int64Field parses a column as a whole number (a CSV writer may have
// written 12.0).
func int64Field(fields []string, i int, name string) (int64, error) {
	s := strings.TrimSpace(fields[i])
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxTraceTokens {
		return 0, fmt.Errorf("%s %q: not a whole number", name, s)
	}
	return int64(f), nil
}

// Column names of the CSV formats.
const (
	azureTime, azureIn, azureOut = "TIMESTAMP", "ContextTokens", "GeneratedTokens"
	burstTime, burstIn, burstOut = "Timestamp", "Request tokens", "Response tokens"
	burstModel, burstLog         = "Model", "Log Type"
)

// azureRows reads Azure's LLM inference trace CSV: TIMESTAMP (a date and
// time), ContextTokens, GeneratedTokens.
type azureRows struct{ *csvRows }

func newAzureRows(br *bufio.Reader) (*azureRows, error) {
	c, err := newCSVRows(br, "Azure", azureTime, azureIn, azureOut)
	return &azureRows{c}, err
}

// azureLayouts are the timestamp forms of the published Azure traces
// (2023: 7 fractional digits, no zone; 2024: a +00:00 offset).
var azureLayouts = []string{"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999"}

func (a *azureRows) next() (TraceRequest, error) {
	fields, n, err := a.row()
	if err != nil {
		return TraceRequest{}, err
	}
	ts := strings.TrimSpace(fields[a.cols[azureTime]])
	var at time.Time
	for _, l := range azureLayouts {
		if at, err = time.Parse(l, ts); err == nil {
			break
		}
	}
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: fmt.Errorf("%s %q: not a date and time like 2023-11-16 18:15:46.6805900", azureTime, ts)}
	}
	if at.Year() < 1970 || at.Year() > 2200 {
		return TraceRequest{}, &TraceError{Line: n, Err: fmt.Errorf("%s %q: a year before 1970 or after 2200", azureTime, ts)}
	}
	return csvRequest(fields, n, time.Duration(at.UnixNano()), a.cols[azureIn], a.cols[azureOut], azureIn, azureOut)
}

// csvRequest reads the two lengths of a CSV row.
func csvRequest(fields []string, n int64, at time.Duration, in, out int, inName, outName string) (TraceRequest, error) {
	i, err := int64Field(fields, in, inName)
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: err}
	}
	o, err := int64Field(fields, out, outName)
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: err}
	}
	il, ol, err := lengths(i, o)
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: err}
	}
	return TraceRequest{Line: n, At: at, Input: il, Output: ol}, nil
}

// burstRows reads BurstGPT's CSV: Timestamp (s), Model, Request tokens,
// Response tokens, Total tokens, Log Type; Model and Log Type become
// labels.
type burstRows struct {
	*csvRows
	model, log int
}

func newBurstRows(br *bufio.Reader) (*burstRows, error) {
	c, err := newCSVRows(br, "BurstGPT", burstTime, burstIn, burstOut)
	if err != nil {
		return nil, err
	}
	b := &burstRows{csvRows: c, model: -1, log: -1}
	// the label columns are optional: a trimmed file may lack them
	if i, ok := c.header[columnKey(burstModel)]; ok {
		b.model = i
	}
	if i, ok := c.header[columnKey(burstLog)]; ok {
		b.log = i
	}
	return b, nil
}

func (b *burstRows) next() (TraceRequest, error) {
	fields, n, err := b.row()
	if err != nil {
		return TraceRequest{}, err
	}
	s := strings.TrimSpace(fields[b.cols[burstTime]])
	f, err := strconv.ParseFloat(s, 64)
	var at time.Duration
	if err == nil {
		at, err = seconds(f)
	}
	if err != nil {
		return TraceRequest{}, &TraceError{Line: n, Err: fmt.Errorf("%s %q: not a number of seconds", burstTime, s)}
	}
	r, err := csvRequest(fields, n, at, b.cols[burstIn], b.cols[burstOut], burstIn, burstOut)
	if err != nil {
		return r, err
	}
	if b.model >= 0 {
		r.Labels = append(r.Labels, "model="+strings.TrimSpace(fields[b.model]))
	}
	if b.log >= 0 {
		r.Labels = append(r.Labels, "log_type="+strings.TrimSpace(fields[b.log]))
	}
	return r, nil
}
