package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ndjsonAll(r io.Reader, max int) (lines []string, truncated bool, err error) {
	d := NewNDJSON(r, nil)
	d.SetMaxEventSize(max)
	for d.Next() {
		lines = append(lines, string(d.Event().Data))
	}
	return lines, d.Truncated(), d.Err()
}

func TestNDJSON(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []string
		truncated bool
	}{
		// Ollama's shape.
		{"ollama", "{\"a\":1}\n{\"done\":true}\n", []string{`{"a":1}`, `{"done":true}`}, false},
		// "\r\n" endings, blank lines skipped; a bare '\r' is JSON whitespace.
		{"crlf", "{\"a\":\r1}\r\n\r\n  \n{}\n", []string{"{\"a\":\r1}", "{}"}, false},
		// A last line without its newline is delivered and flagged.
		{"no final newline", "{}\n{\"done\":true}", []string{"{}", `{"done":true}`}, true},
		{"empty", "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, truncated, err := ndjsonAll(strings.NewReader(tt.in), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(lines, tt.want) || truncated != tt.truncated {
				t.Errorf("got %q truncated=%v, want %q truncated=%v", lines, truncated, tt.want, tt.truncated)
			}
		})
	}
}

func TestNDJSONTooLarge(t *testing.T) {
	_, _, err := ndjsonAll(strings.NewReader("{}\n"+strings.Repeat("x", 100)+"\n"), 64)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

func TestNDJSONAt(t *testing.T) {
	var clock time.Time
	r := &stepReader{pieces: []string{"{\"a\"", ":1}\n{}\n", "{}"}, clock: &clock}
	d := NewNDJSON(r, func() time.Time { return clock })
	var at []int
	for d.Next() {
		at = append(at, int(d.Event().At.Sub(time.Time{})/time.Second))
	}
	if want := []int{2, 2, 3}; !reflect.DeepEqual(at, want) {
		t.Errorf("At = %v, want %v", at, want)
	}
}
