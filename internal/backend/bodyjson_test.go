package backend

import (
	"encoding/json"
	"github.com/servebench/servebench/internal/record"
	"math"
	"testing"
)

// TestAppendJSON: each kind of value a body holds, byte for byte as
// json.Marshal writes it.
func TestAppendJSON(t *testing.T) {
	cases := map[string]any{
		"plain":         "hello world",
		"escapes":       "quote \" backslash \\ newline \n tab \t cr \r bs \b ff \f nul \x00 unit \x1f",
		"html":          "<b>&amp;</b>",
		"separators":    "a\u2028b\u2029c",
		"invalid UTF-8": "bad \xff\xfe byte \xe2\x82 cut",
		"multi-byte":    "héllo 世界 🎉",
		"numbers":       map[string]any{"int": 42, "negative": -7, "float": 0.7, "big": 1e21, "tiny": 1e-7, "inf-free": math.MaxInt64},
		"bools and nil": []any{true, false, nil},
		"messages":      []Message{{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "hi\n"}},
		"nil messages":  []Message(nil),
		"nested":        map[string]any{"z": []any{map[string]any{"b": 1, "a": "x"}}, "a": map[string]any{}, "m": map[string]any(nil)},
		"odd keys":      map[string]any{"<k>": 1, "é": 2, "\x01": 3, "": 4},
		"other types":   map[string]any{"u": uint64(9), "f32": float32(1.5), "strs": []string{"a", "b"}},
		"a body":        map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 128, "messages": []Message{{Role: "user", Content: "tok tok"}}},
	}
	for name, v := range cases {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendJSON(nil, v)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: got %s (%v), want %s", name, got, err, want)
		}
	}
}

// TestEncodeMatchesMarshal: every API's request body, with extra fields,
// is what json.Marshal makes of the API's map.
func TestEncodeMatchesMarshal(t *testing.T) {
	extra := map[string]any{"temperature": 0.7, "options": map[string]any{"seed": 1}, "stop": []any{"<|end|>"}}
	for _, a := range record.APIs() {
		c, err := New(Options{BaseURL: "http://127.0.0.1:1", API: a, Model: "m", ExtraBody: extra, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		req := &Request{Prompt: "write <a> poem\n", MaxTokens: 64}
		if a == record.APIOpenAIChat || a == record.APIOllamaChat {
			req = &Request{Messages: []Message{{Role: "user", Content: "hi & bye"}}, MaxTokens: 64}
		}
		m, err := c.api.body(c, req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		got, err := c.encode(req)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: body %s (%v), want %s", a, got, err, want)
		}
	}
}

// FuzzAppendJSON: any text in a prompt, a message or a key is written as
// json.Marshal writes it.
func FuzzAppendJSON(f *testing.F) {
	f.Add("hello", "user", "k", 5)
	f.Add("\x00<&>\u2028\xff\"\\", "sys\n", "\xe2\x82", -1)
	f.Fuzz(func(t *testing.T, prompt, role, key string, n int) {
		v := map[string]any{
			"prompt":   prompt,
			key:        n,
			"messages": []Message{{Role: role, Content: prompt}},
			"nested":   []any{map[string]any{key: prompt, "b": n%2 == 0}},
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendJSON(nil, v)
		if err != nil || string(got) != string(want) {
			t.Fatalf("got %s (%v), want %s", got, err, want)
		}
	})
}
