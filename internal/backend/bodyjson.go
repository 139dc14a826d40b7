package backend

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/servebench/servebench/internal/jsonenc"
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

// appendJSONString quotes s as json.Marshal does, HTML escaping included.
func appendJSONString(b []byte, s string) []byte { return jsonenc.String(b, s, true) }
