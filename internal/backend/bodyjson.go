package backend

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSON appends v as json.Marshal encodes it (FuzzAppendJSON holds
// the bytes equal) for the values a request body holds: strings, integers,
// booleans, nil, messages, and the maps and lists of a user's extra
// fields; anything else goes to json.Marshal. Without reflection it costs
// a fraction of the CPU, and its shallow calls keep the stack of a
// stream's goroutine small (json.Marshal of a map alone needs over 4 KB
// of it).
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendJSONString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case nil:
		return append(b, "null"...), nil
	case []Message:
		return appendMessages(b, v), nil
	case map[string]any:
		return appendObject(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	enc, err := json.Marshal(v)
	return append(b, enc...), err
}

// appendObject writes a map's members in key order, as json.Marshal does.
func appendObject(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, k), ':')
		var err error
		if b, err = appendJSON(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendMessages(b []byte, ms []Message) []byte {
	if ms == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"role":`...), m.Role)
		b = appendJSONString(append(b, `,"content":`...), m.Content)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString quotes s as json.Marshal does: the JSON escapes for
// quote, backslash and control characters (\b \f \n \r \t by name, others
// as \u00XX), <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029
// escaped, and each byte of invalid UTF-8 replaced by \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	plain := 0 // start of the bytes not yet copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainJSON[c] {
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

// plainJSON marks the ASCII bytes appendJSONString copies as they are.
var plainJSON = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
