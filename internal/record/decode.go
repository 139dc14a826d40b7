package record

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// decode reads one line into rec exactly as json.Unmarshal would. A
// top-level chunks array in the form encode writes ({"t":N,"n":N} with an
// optional "r":true, nothing else) is read by hand, the rest of the line by
// encoding/json; any other line is left to encoding/json whole
// (FuzzDecode holds the two to the same result). Chunks are most of a
// record's bytes, and reading them by reflection was most of the cost of
// reading a run back (report, report.html).
func decode(line []byte, rec *Record) error {
	start, end, ok := chunksMember(line)
	var chunks []Chunk
	if ok {
		chunks, ok = readChunks(line[start:end])
	}
	if ok {
		// The array, valid JSON, becomes null: the line keeps every other
		// byte, so it is as valid or invalid as before.
		rest := make([]byte, 0, len(line)-(end-start)+len("null"))
		rest = append(append(append(rest, line[:start]...), "null"...), line[end:]...)
		if json.Unmarshal(rest, rec) == nil {
			rec.Chunks = chunks
			return nil
		}
		*rec = Record{}
	}
	return json.Unmarshal(line, rec)
}

// chunksMember finds the value of the one top-level member of line's
// object whose key is exactly "chunks": [start, end) are its bytes from
// '['. ok is false when there is none, or more than one, or a key that
// encoding/json might match to it only when folding case (or with
// escapes), or the line is not a plain object as far as this scan sees.
func chunksMember(line []byte) (start, end int, ok bool) {
	if len(line) == 0 || line[0] != '{' {
		return 0, 0, false
	}
	depth, found := 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := stringEnd(line, i)
			if j < 0 {
				return 0, 0, false
			}
			key := line[i+1 : j]
			i = j
			if depth != 1 || j+1 >= len(line) || line[j+1] != ':' {
				continue // a value, or a nested key
			}
			if !bytes.EqualFold(key, []byte("chunks")) && bytes.IndexByte(key, '\\') < 0 && asciiKey(key) {
				continue
			}
			if found || string(key) != "chunks" || j+2 >= len(line) || line[j+2] != '[' {
				return 0, 0, false
			}
			found, start = true, j+2
			e := bytes.IndexByte(line[start:], ']')
			if e < 0 {
				return 0, 0, false
			}
			end = start + e + 1
			i = end - 1
		}
	}
	return start, end, found && depth == 0
}

// asciiKey reports whether key holds only ASCII bytes (a non-ASCII key may
// fold to "chunks", as the Kelvin sign folds to k).
func asciiKey(key []byte) bool {
	for _, c := range key {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// stringEnd returns the index of the quote closing the string opened at
// i, or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// readChunks reads an array written by encode; ok is false for anything
// else (spaces, other keys or order, non-canonical numbers).
func readChunks(b []byte) ([]Chunk, bool) {
	out := make([]Chunk, 0, bytes.Count(b, []byte(`{`)))
	b = b[1:] // '['
	for len(b) > 0 && b[0] != ']' {
		if len(out) > 0 {
			if b[0] != ',' {
				return nil, false
			}
			b = b[1:]
		}
		var c Chunk
		var ok bool
		if b, ok = cut(b, `{"t":`); !ok {
			return nil, false
		}
		if c.AtNS, b, ok = number(b); !ok {
			return nil, false
		}
		if b, ok = cut(b, `,"n":`); !ok {
			return nil, false
		}
		var n int64
		if n, b, ok = number(b); !ok {
			return nil, false
		}
		c.Tokens = int(n)
		if rest, ok := cut(b, `,"r":true`); ok {
			c.Reasoning, b = true, rest
		}
		if b, ok = cut(b, `}`); !ok {
			return nil, false
		}
		out = append(out, c)
	}
	return out, len(b) == 1
}

func cut(b []byte, prefix string) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return b, false
	}
	return b[len(prefix):], true
}

// number reads an integer as strconv.AppendInt writes it.
func number(b []byte) (int64, []byte, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == digits || (b[digits] == '0' && (i > digits+1 || digits > 0)) {
		return 0, b, false // none, a leading zero, or -0
	}
	if i-digits > 18 { // may not fit: let strconv say
		v, err := strconv.ParseInt(string(b[:i]), 10, 64)
		return v, b[i:], err == nil
	}
	var v int64
	for _, c := range b[digits:i] {
		v = 10*v + int64(c-'0')
	}
	if digits > 0 {
		v = -v
	}
	return v, b[i:], true
}
