package backend

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonScan is a small, strict JSON reader for the hot path: it pulls the
// few text fields of an ordinary chunk out of its bytes without
// allocating, and validates everything else it skips. Whenever it meets
// anything it does not handle exactly as encoding/json would (a syntax
// error, a wrong type, a duplicate or case-folded key, an escaped key,
// invalid UTF-8 in a text), it sets bad and the caller decodes the chunk
// with encoding/json instead. So it changes how fast a chunk is read,
// never what is read from it (FuzzFastPath holds it to that).
type jsonScan struct {
	b     []byte
	i     int
	depth int
	bad   bool
	// esc holds unescaped strings; texts returned point into it or b.
	esc []byte
}

// maxScanDepth bounds nesting; deeper input goes to encoding/json.
const maxScanDepth = 256

func (s *jsonScan) reset(b []byte) {
	*s = jsonScan{b: b, esc: s.esc[:0]}
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *jsonScan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// end reports whether only whitespace is left.
func (s *jsonScan) end() bool {
	s.ws()
	return !s.bad && s.i == len(s.b)
}

// open consumes c ('{' or '[').
func (s *jsonScan) open(c byte) bool {
	if s.peek() != c || s.depth >= maxScanDepth {
		s.bad = true
		return false
	}
	s.i++
	s.depth++
	return true
}

// member reads the next key of an object and its colon. It returns false
// after the closing brace, or on error (bad). Keys with escapes are left
// to encoding/json.
func (s *jsonScan) member(first bool) ([]byte, bool) {
	c := s.peek()
	if c == '}' {
		s.i++
		s.depth--
		return nil, false
	}
	if !first {
		if c != ',' {
			s.bad = true
			return nil, false
		}
		s.i++
		c = s.peek()
	}
	if c != '"' {
		s.bad = true
		return nil, false
	}
	start := s.i + 1
	if ok, escaped := s.skipString(); !ok || escaped {
		s.bad = true
		return nil, false
	}
	key := s.b[start : s.i-1]
	if s.peek() != ':' {
		s.bad = true
		return nil, false
	}
	s.i++
	return key, true
}

// elem moves to the next array element; false after the closing bracket,
// or on error (bad).
func (s *jsonScan) elem(first bool) bool {
	c := s.peek()
	if c == ']' {
		s.i++
		s.depth--
		return false
	}
	if !first {
		if c != ',' {
			s.bad = true
			return false
		}
		s.i++
	}
	return true
}

// null consumes a null if one is next.
func (s *jsonScan) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// textInto reads a string into *dst as encoding/json would into a string
// field: null leaves *dst as it is; anything else is bad.
func (s *jsonScan) textInto(dst *[]byte) {
	if s.null() {
		return
	}
	*dst = s.text()
}

// text reads a string.
func (s *jsonScan) text() []byte {
	if s.peek() != '"' {
		s.bad = true
		return nil
	}
	start := s.i + 1
	ok, escaped := s.skipString()
	if !ok {
		s.bad = true
		return nil
	}
	raw := s.b[start : s.i-1]
	if escaped {
		raw = s.unescape(raw)
	}
	if !utf8.Valid(raw) {
		// encoding/json would replace the invalid bytes.
		s.bad = true
	}
	return raw
}

// skip validates and skips one value.
func (s *jsonScan) skip() {
	switch c := s.peek(); {
	case c == '{':
		s.open('{')
		for first := true; !s.bad; first = false {
			if _, ok := s.member(first); !ok {
				return
			}
			s.skip()
		}
	case c == '[':
		s.open('[')
		for first := true; !s.bad && s.elem(first); first = false {
			s.skip()
		}
	case c == '"':
		if ok, _ := s.skipString(); !ok {
			s.bad = true
		}
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.bad = true
	}
}

func (s *jsonScan) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.bad = true
		return
	}
	s.i += len(lit)
}

// number skips -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *jsonScan) number() {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		s.bad = true
		return
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !isDigit(b[i+1]) {
			s.bad = true
			return
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			s.bad = true
			return
		}
		i = digits(b, i)
	}
	s.i = i
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// strStop marks the bytes that end a run of plain string bytes: the
// closing quote, a backslash, and the control characters JSON forbids.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// skipString moves past the string starting at s.i, checking its escapes
// and that it holds no control characters; escaped reports whether it
// had escapes.
func (s *jsonScan) skipString() (ok, escaped bool) {
	b := s.b
	for i := s.i + 1; i < len(b); i++ {
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return true, escaped
		case '\\':
			escaped = true
			i++
			if i >= len(b) {
				return false, escaped
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || hex4(b[i+1:i+5]) < 0 {
					return false, escaped
				}
				i += 4
			default:
				return false, escaped
			}
		default: // a control character
			return false, escaped
		}
	}
	return false, escaped
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unescape decodes a validated string body into s.esc, the way
// encoding/json does (lone surrogates become U+FFFD).
func (s *jsonScan) unescape(raw []byte) []byte {
	start := len(s.esc)
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			s.esc = append(s.esc, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			s.esc = append(s.esc, '\b')
		case 'f':
			s.esc = append(s.esc, '\f')
		case 'n':
			s.esc = append(s.esc, '\n')
		case 'r':
			s.esc = append(s.esc, '\r')
		case 't':
			s.esc = append(s.esc, '\t')
		case 'u':
			r := hex4(raw[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 = hex4(raw[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			s.esc = utf8.AppendRune(s.esc, r)
		default: // '"', '\\', '/'
			s.esc = append(s.esc, raw[i])
		}
	}
	return s.esc[start:]
}

// keys names the members of one JSON object that a chunk struct
// decodes, by index: the scanner switches on the index, and the struct's
// json tags are exactly these names (TestKeyTablesMatchTags), so that the
// scanner and encoding/json cannot drift apart. Every name starts with a
// lower-case ASCII letter.
type keys []string

// What find returns for a key that is not in the table.
const (
	keyUnknown = -1 // no field of the struct: the member is skipped
	keyFolded  = -2 // a field only when case is folded, as encoding/json does
)

// find returns key's index in ks, keyFolded when encoding/json would
// match it to one of ks only case-insensitively (the scanner then leaves
// the chunk to encoding/json), else keyUnknown. A key starting with a
// non-ASCII byte counts as folded.
func (ks keys) find(key []byte) int {
	if len(key) == 0 {
		return keyUnknown
	}
	if key[0] >= utf8.RuneSelf {
		return keyFolded
	}
	for i, k := range ks {
		if key[0]|0x20 != k[0] || len(key) < len(k) {
			continue
		}
		if string(key) == k {
			return i
		}
		// Only a multi-byte rune (the Kelvin sign, long s) folds to an
		// ASCII letter, so a folded match is never shorter than k.
		if bytes.EqualFold(key, []byte(k)) {
			return keyFolded
		}
	}
	return keyUnknown
}

// fields reads an object (or null), handing the index of each member in
// ks to field, which reads the value and returns true when it reads that
// member. A member field does not read must be null (encoding/json
// leaves the field zero); unknown members are skipped; a case-folded key
// makes the chunk bad, for encoding/json to decode.
func (s *jsonScan) fields(ks keys, field func(k int) bool) {
	if s.null() || !s.open('{') {
		return
	}
	for first := true; !s.bad; first = false {
		key, ok := s.member(first)
		if !ok {
			return
		}
		switch k := ks.find(key); {
		case k == keyFolded:
			s.bad = true
		case k == keyUnknown:
			s.skip()
		case !field(k):
			s.zero()
		}
	}
}

// zero reads the value of a member the fast path does not read: null,
// which leaves the field zero, or anything else, which is for
// encoding/json.
func (s *jsonScan) zero() {
	if !s.null() {
		s.bad = true
	}
}
