package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeAll reads a chunked body through c in reads of at most size bytes.
func decodeAll(wire string, size int) (string, error) {
	c := newChunked(iotest.HalfReader(strings.NewReader(wire)))
	var out bytes.Buffer
	buf := make([]byte, size)
	for {
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.String(), nil
		}
		if err != nil {
			return out.String(), err
		}
	}
}

// TestChunked: a table of framings, each read with buffers of every size
// from 1 byte to the whole body.
func TestChunked(t *testing.T) {
	cases := []struct {
		name, wire, want string
		err              error
	}{
		{"two chunks", "3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", "hello", nil},
		{"upper-case hex and an extension", "A;name=\"v\"\r\n0123456789\r\n0\r\n\r\n", "0123456789", nil},
		{"whitespace after the size", "5 \t\r\nhello\r\n0\r\n\r\n", "hello", nil},
		{"whitespace before an extension", "5 ;x\r\nhello\r\n0\r\n\r\n", "", errHexByte},
		{"a trailer", "5\r\nhello\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\n", "hello", nil},
		{"SSE events", "9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n", "data: a\n\ndata: b\n\n", nil},
		{"empty body", "0\r\n\r\n", "", nil},
		{"bare LF in a size line", "5\nhello\r\n0\r\n\r\n", "", errBareLF},
		{"CR inside a size line", "5\r;x\r\nhello\r\n0\r\n\r\n", "", errCR},
		{"data not followed by CRLF", "5\r\nhelloX\r\n0\r\n\r\n", "hello", errNotCRLF},
		{"not hex", "5g\r\nhello\r\n", "", errHexByte},
		{"no size", ";x\r\nhello\r\n", "", errEmptySize},
		{"17 hex digits", "00000000000000005\r\nhello\r\n", "", errHexLong},
		{"cut in the data", "5\r\nhel", "hel", io.ErrUnexpectedEOF},
		{"cut before the last chunk", "5\r\nhello\r\n", "hello", io.ErrUnexpectedEOF},
		{"cut in the trailer", "5\r\nhello\r\n0\r\n", "hello", io.ErrUnexpectedEOF},
		{"a trailer line with no name", "0\r\n: x\r\n\r\n", "", errTrailerLine},
		{"a size line over 4096 bytes", "5;" + strings.Repeat("x", 4100) + "\r\nhello\r\n0\r\n\r\n", "", errLineTooLong},
		{"a trailer over 4096 bytes", "0\r\nX: " + strings.Repeat("x", 4100) + "\r\n\r\n", "", errTrailerLong},
		{"framing far beyond its data", strings.Repeat("1;"+strings.Repeat("e", 200)+"\r\nx\r\n", 100), strings.Repeat("x", 88), errNonData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 7, 64, len(tc.wire) + 1} {
				got, err := decodeAll(tc.wire, size)
				if !errors.Is(err, tc.err) {
					t.Fatalf("read size %d: error %v, want %v", size, err, tc.err)
				}
				if got != tc.want {
					t.Fatalf("read size %d: data %q, want %q", size, got, tc.want)
				}
			}
		})
	}
}

// TestChunkedEndsWithData: the last data and io.EOF come from one read
// when the terminator arrived with them, and bytes after the end are
// noticed (the connection is not reused).
func TestChunkedEndsWithData(t *testing.T) {
	c := newChunked(strings.NewReader("5\r\nhello\r\n0\r\n\r\nHTTP/1.1"))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if string(buf[:n]) != "hello" || err != io.EOF {
		t.Errorf("read %q, %v; want hello and io.EOF together", buf[:n], err)
	}
	if !c.extra {
		t.Error("bytes after the body's end were not noticed")
	}
}

// FuzzChunked holds the decoder to net/http's reading of a chunked
// response body: on any input and any read size, the same data, and an
// error where it errs, but in the trailer, whose fields net/http parses as
// headers and this decoder drops.
func FuzzChunked(f *testing.F) {
	for _, s := range []string{"3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", "A;x\r\n0123456789\r\n0\r\nX: 1\r\n\r\n", "5\nhello", "5\r\nhelloX\r\n", "ff\r\n", "0\r\n\r\n"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, wire []byte, size uint8) {
		head := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(head+string(wire))), nil)
		if err != nil {
			t.Fatal(err)
		}
		ref, refErr := io.ReadAll(resp.Body)
		got, err := decodeAll(string(wire), int(size)+1)
		inTrailer := refErr != nil && (strings.Contains(refErr.Error(), "trailer") || strings.Contains(refErr.Error(), "MIME"))
		if refErr == nil && err != nil || refErr != nil && err == nil && !inTrailer {
			t.Fatalf("error %v, net/http's %v (input %q)", err, refErr, wire)
		}
		if refErr == nil && got != string(ref) {
			t.Fatalf("data %q, net/http's %q", got, ref)
		}
		if !strings.HasPrefix(string(ref), got) && !strings.HasPrefix(got, string(ref)) {
			t.Fatalf("data %q, net/http's %q", got, ref)
		}
	})
}
