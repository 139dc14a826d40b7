package h1

import (
	"bytes"
	"errors"
	"io"
)

// chunked decodes the chunked transfer coding (RFC 9112, section 7.1) in
// its caller's buffer: it reads the wire into p and moves the data over the
// framing, so that a stream needs no buffer between the socket and its
// event decoder (net/http's chunked reader needs a bufio.Reader, 4 KB per
// stream). Its rules are net/http's, which FuzzChunked holds it to: lines
// end in CRLF and are at most 4096 bytes, extensions are dropped, a size
// has at most 16 hex digits, data is followed by CRLF, and framing may
// exceed 16 bytes a chunk plus twice its data by 16 KB at most. Trailer
// fields are read and dropped.
type chunked struct {
	r     io.Reader
	state chunkState
	// line is the framing line read so far, in small unless it is longer.
	line   []byte
	small  [32]byte
	left   uint64 // data bytes left in the chunk
	excess int64  // framing beyond the allowance (net/http's measure)
	// trailer counts the trailer's bytes; extra is set when bytes follow
	// the body's end (the connection cannot carry another response).
	trailer int
	extra   bool
	err     error // io.EOF once the body ended
}

type chunkState int

const (
	inSize    chunkState = iota // a chunk-size line
	inData                      // chunk data
	inDataCR                    // the CR after the data
	inDataLF                    // the LF after it
	inTrailer                   // a trailer line, or the empty line that ends the body
	ended
)

// Limits, net/http's.
const (
	maxChunkLine  = 4096
	maxTrailer    = 4096
	maxExcess     = 16 << 10
	chunkOverhead = 16
)

var (
	errBareLF      = errors.New("chunked line ends with bare LF")
	errCR          = errors.New("invalid CR in chunked line")
	errLineTooLong = errors.New("header line too long")
	errNotCRLF     = errors.New("malformed chunked encoding")
	errNonData     = errors.New("chunked encoding contains too much non-data")
	errEmptySize   = errors.New("empty hex number for chunk length")
	errHexByte     = errors.New("invalid byte in chunk length")
	errHexLong     = errors.New("http chunk length too large")
	errTrailerLong = errors.New("http: suspiciously long trailer after chunked body")
	errTrailerLine = errors.New("malformed trailer line")
)

func newChunked(r io.Reader) *chunked {
	c := &chunked{r: r}
	c.line = c.small[:0]
	return c
}

// Read reads wire bytes into p and returns the data among them. It reads
// again when what arrived was all framing, and returns io.EOF with the
// last data when the end came with it.
func (c *chunked) Read(p []byte) (int, error) {
	for c.err == nil && len(p) > 0 {
		n, rerr := c.r.Read(p)
		out := c.decode(p[:n])
		if c.err == nil && rerr != nil {
			if rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF // the body ended before its last chunk
			}
			c.err = rerr
		}
		if out > 0 {
			if c.err == io.EOF {
				return out, io.EOF
			}
			return out, nil
		}
	}
	return 0, c.err
}

// decode decodes b in place and returns the length of the data now at its
// start. It sets c.err at the end of the body or on a framing error.
func (c *chunked) decode(b []byte) int {
	w, i := 0, 0
	for i < len(b) && c.err == nil {
		switch c.state {
		case inData:
			n := min(uint64(len(b)-i), c.left)
			w += copy(b[w:], b[i:i+int(n)])
			i += int(n)
			if c.left -= n; c.left == 0 {
				c.state = inDataCR
			}
		case inDataCR:
			c.expect(b[i], '\r', inDataLF)
			i++
		case inDataLF:
			c.expect(b[i], '\n', inSize)
			i++
		case inSize, inTrailer:
			k := bytes.IndexByte(b[i:], '\n')
			if k < 0 {
				c.grow(b[i:])
				i = len(b)
				break
			}
			c.grow(b[i : i+k])
			i += k + 1
			if c.err == nil {
				c.endLine()
			}
		}
	}
	if c.state == ended && i < len(b) {
		c.extra = true
	}
	return w
}

// expect checks one byte of the CRLF after a chunk's data.
func (c *chunked) expect(got, want byte, next chunkState) {
	if got != want {
		c.err = errNotCRLF
		return
	}
	c.state = next
}

// grow adds a part of a framing line, within the line limits.
func (c *chunked) grow(part []byte) {
	if c.state == inTrailer {
		if c.trailer += len(part); c.trailer > maxTrailer {
			c.err = errTrailerLong
			return
		}
	} else if len(c.line)+len(part) >= maxChunkLine {
		c.err = errLineTooLong
		return
	}
	c.line = append(c.line, part...)
}

// endLine handles a framing line whose LF was just read.
func (c *chunked) endLine() {
	line := c.line
	c.line = c.small[:0]
	if c.state == inTrailer {
		c.endTrailerLine(line)
		return
	}
	switch idx := bytes.IndexByte(line, '\r'); {
	case idx < 0:
		c.err = errBareLF
		return
	case idx != len(line)-1:
		c.err = errCR
		return
	}
	line = line[:len(line)-1]
	c.excess += int64(len(line)) + 2
	line, _, _ = bytes.Cut(trimOWS(line), []byte(";"))
	n, err := parseHex(line)
	if err != nil {
		c.err = err
		return
	}
	c.excess = max(c.excess-chunkOverhead-2*int64(min(n, 1<<40)), 0)
	if c.excess > maxExcess {
		c.err = errNonData
		return
	}
	c.left = n
	c.state = inData
	if n == 0 {
		c.state = inTrailer
	}
}

// endTrailerLine: the empty line ends the body; a field line is dropped.
func (c *chunked) endTrailerLine(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		c.state, c.err = ended, io.EOF
		return
	}
	if colon := bytes.IndexByte(line, ':'); colon <= 0 {
		c.err = errTrailerLine
	}
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseHex parses a chunk size as net/http does.
func parseHex(v []byte) (uint64, error) {
	if len(v) == 0 {
		return 0, errEmptySize
	}
	var n uint64
	for i, b := range v {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			b = b - 'A' + 10
		default:
			return 0, errHexByte
		}
		if i == 16 {
			return 0, errHexLong
		}
		n = n<<4 | uint64(b)
	}
	return n, nil
}
