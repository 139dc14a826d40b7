package workload

import (
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/tokenize"
)

func TestParseJSONL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Turn
	}{
		{"prompt with length", `{"prompt": "hi there", "output_tokens": 20}`, []Turn{{Prompt: "hi there", Output: 20}}},
		{"prompt alone", `{"prompt": "hi"}`, []Turn{{Prompt: "hi"}}},
		// null is no value: the other field, or the default length.
		{"nulls", `{"prompt": "hi", "messages": null, "output_tokens": null}`, []Turn{{Prompt: "hi"}}},
		// Other fields (ids, categories) are the file's business.
		{"extra fields", `{"id": 3, "category": "qa", "prompt": "q"}`, []Turn{{Prompt: "q"}}},
		{"blank lines and CRLF", "\n{\"prompt\": \"a\"}\r\n\r\n{\"prompt\": \"b\"}\r\n", []Turn{{Prompt: "a"}, {Prompt: "b"}}},
		{"byte order mark", "\ufeff{\"prompt\": \"a\"}", []Turn{{Prompt: "a"}}},
		{"messages", `{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"}], "output_tokens": 5}`,
			[]Turn{{Messages: []tokenize.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "q"}}, Output: 5}}},
		// A ShareGPT conversation per line reads as ShareGPT.
		{"sharegpt line", `{"id": "x", "conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a b"}]}`,
			[]Turn{{Prompt: "q", Reply: "a b"}}},
		{"empty file", "", nil},
	}
	for _, tt := range tests {
		convs, err := ParseJSONL("p.jsonl", []byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var got []Turn
		for _, c := range convs {
			got = append(got, c.Turns...)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseJSONLErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", "{\"prompt\": \"a\"}\n{prompt: b}", "p.jsonl:2: not a JSON object"},
		{"array line", `["a"]`, "p.jsonl:1: not a JSON object"},
		{"neither", `{"text": "a"}`, `p.jsonl:1: has neither "prompt" nor "messages"`},
		{"both", `{"prompt": "a", "messages": [{"role": "user", "content": "b"}]}`, "p.jsonl:1: has both"},
		{"empty prompt", "\n\n{\"prompt\": \"\"}", `p.jsonl:3: "prompt" is empty`},
		// A field of the wrong type is named with the value the file gives.
		{"prompt not string", `{"prompt": 42}`, `p.jsonl:1: "prompt" 42: want a string`},
		{"prompt an object", `{"prompt": {"text": "a very long prompt that is cut short in the message"}}`, `p.jsonl:1: "prompt" {"text": "a very long prompt that is cut…: want a string`},
		{"messages not a list", `{"messages": "hi"}`, `p.jsonl:1: "messages" "hi": want a list of {"role", "content"} objects`},
		{"zero output", `{"prompt": "a", "output_tokens": 0}`, `p.jsonl:1: "output_tokens" 0: want a whole number of at least 1`},
		{"fractional output", `{"prompt": "a", "output_tokens": 2.5}`, `"output_tokens" 2.5: want a whole number`},
		{"huge output", `{"prompt": "a", "output_tokens": 1e11}`, `p.jsonl:1: "output_tokens" 1e11: more than 1073741824, the most a request may ask for`},
		{"output past float64", `{"prompt": "a", "output_tokens": 1e400}`, `"output_tokens" 1e400: more than 1073741824`},
		{"output as string", `{"prompt": "a", "output_tokens": "20"}`, `p.jsonl:1: "output_tokens" "20": want a number`},
		{"no messages", `{"messages": []}`, `"messages" is empty`},
		{"bad role", `{"messages": [{"role": "tool", "content": "x"}]}`, `message 1: role "tool"`},
		{"content parts", `{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}`, "content must be a string"},
		{"no user", `{"messages": [{"role": "system", "content": "x"}]}`, "no user message"},
		{"bad sharegpt line", `{"conversations": [{"from": "robot", "value": "x"}]}`, `p.jsonl:1: conversation , turn 1: unknown speaker "robot"`},
	}
	for _, tt := range tests {
		_, err := ParseJSONL("p.jsonl", []byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func FuzzParseJSONL(f *testing.F) {
	f.Add([]byte(`{"prompt": "hi", "output_tokens": 3}` + "\n" + `{"messages": [{"role": "user", "content": "x"}]}`))
	f.Add([]byte(`{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}`))
	f.Add([]byte("{\"prompt\": \"\\u00e9\"}\n\n{}"))
	f.Add([]byte(`{"prompt": 42, "messages": null, "output_tokens": 1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := ParseJSONL("f.jsonl", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkTurns(t, convs)
	})
}

// checkTurns holds parsed conversations to what the sources rely on: every
// turn has something to send and a sane length.
func checkTurns(t *testing.T, convs []Conversation) {
	t.Helper()
	for _, c := range convs {
		if len(c.Turns) == 0 || c.Line < 1 {
			t.Fatalf("conversation %+v: no turns or no line", c)
		}
		for _, tr := range c.Turns {
			if (tr.Prompt == "") == (tr.Messages == nil) || tr.Output < 0 {
				t.Fatalf("turn %+v: want exactly one of prompt and messages, output >= 0", tr)
			}
		}
	}
}
