// Package jsonenc appends JSON values byte-identical to encoding/json's, for
// the hot paths that write one per request (a request body, a record), where
// reflection was most of the cost. It covers strings, with or without HTML
// escaping, and float64; integers and booleans are strconv's, as in
// encoding/json. FuzzString and FuzzFloat hold it to encoding/json.
package jsonenc

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// String appends s quoted as encoding/json does: the JSON escapes for
// quote, backslash and control characters (\b \f \n \r \t by name, others
// as \u00XX), U+2028 and U+2029 escaped, each byte of invalid UTF-8 as
// \ufffd, and, when html is true (json.Marshal's default), <, > and & as
// \u003c, \u003e and \u0026.
func String(b []byte, s string, html bool) []byte {
	const hexDigits = "0123456789abcdef"
	plainTable := &plainNoHTML
	if html {
		plainTable = &plainHTML
	}
	b = append(b, '"')
	plain := 0 // start of the bytes not yet copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainTable[c] {
				i++
				continue
			}
			b = append(b, s[plain:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			plain = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[plain:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[plain:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		plain = i
	}
	return append(append(b, s[plain:]...), '"')
}

// The ASCII bytes String copies as they are, with and without HTML escaping.
var plainNoHTML, plainHTML = func() (no, html [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		no[c] = c != '"' && c != '\\'
		html[c] = no[c] && c != '<' && c != '>' && c != '&'
	}
	return no, html
}()

// Float appends f as encoding/json encodes a float64: the shortest decimal
// that reads back as f, in exponent form below 1e-6 and from 1e21 on (with
// a one-digit negative exponent written without its leading zero). NaN and
// the infinities have no JSON form and are an error, as in encoding/json.
func Float(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
