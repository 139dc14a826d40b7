package workload

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseShareGPT(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   [][]Turn // per conversation
		system string   // of the first conversation
	}{
		{"pairs", `[{"id": "a", "conversations": [
			{"from": "human", "value": "q1"}, {"from": "gpt", "value": "a1"},
			{"from": "human", "value": "q2"}, {"from": "gpt", "value": "a2"}]}]`,
			[][]Turn{{{Prompt: "q1", Reply: "a1"}, {Prompt: "q2", Reply: "a2"}}}, ""},
		{"system and other speaker names", `[{"conversations": [{"from": "system", "value": "be kind"},
			{"from": "user", "value": "q"}, {"from": "ChatGPT", "value": "a"}]}]`,
			[][]Turn{{{Prompt: "q", Reply: "a"}}}, "be kind"},
		// Scraped dumps: an answer with no question, an empty question and
		// its answer, a question with no answer, an empty conversation.
		{"untidy", `[{"conversations": [{"from": "gpt", "value": "hello"}, {"from": "human", "value": "q"},
			{"from": "gpt", "value": "a"}, {"from": "human", "value": " "}, {"from": "gpt", "value": "eh?"},
			{"from": "human", "value": "last"}]}, {"conversations": []}]`,
			[][]Turn{{{Prompt: "q", Reply: "a"}, {Prompt: "last"}}}, ""},
		// Two questions in a row: the first has no answer of its own.
		{"double question", `[{"conversations": [{"from": "human", "value": "a"}, {"from": "human", "value": "b"}, {"from": "gpt", "value": "c"}, {"from": "gpt", "value": "d"}]}]`,
			[][]Turn{{{Prompt: "a"}, {Prompt: "b", Reply: "c"}}}, ""},
		{"empty array", `[]`, nil, ""},
	}
	for _, tt := range tests {
		convs, err := ParseShareGPT("s.json", []byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var got [][]Turn
		for _, c := range convs {
			got = append(got, c.Turns)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		if len(convs) > 0 && convs[0].System != tt.system {
			t.Errorf("%s: system %q, want %q", tt.name, convs[0].System, tt.system)
		}
	}
}

func TestParseShareGPTErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not an array", `{"conversations": []}`, "s.json:1: a ShareGPT file is a JSON array"},
		{"empty file", ``, "s.json:1: a ShareGPT file is a JSON array"},
		{"syntax error", "[\n{\"conversations\": []},\n{\"conversations\": [,]}\n]", "s.json:3: invalid character"},
		{"no conversations", "[\n {\"conversations\": []},\n {\"id\": \"x7\", \"turns\": []}\n]", `s.json:3: conversation x7 has no "conversations" list`},
		{"unknown speaker", "[{\"id\": 4, \"conversations\": [\n{\"from\": \"narrator\", \"value\": \"x\"}]}]", `s.json:1: conversation 4, turn 1: unknown speaker "narrator"`},
		{"value not a string", "[{\"conversations\": [\n{\"from\": \"human\",\n \"value\": 5}]}]", "s.json:3: not a ShareGPT conversation"},
		{"unterminated", "[\n{\"conversations\": []}", "s.json:2: the file ends before the array is closed"},
		{"cut inside an entry", "[\n{\"conversations\": [", "s.json:2: unexpected EOF"},
		{"trailing data", "[] []", "s.json:1: unexpected data after the array"},
	}
	for _, tt := range tests {
		_, err := ParseShareGPT("s.json", []byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func FuzzParseShareGPT(f *testing.F) {
	sample, err := os.ReadFile("testdata/sharegpt_sample.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte(`[{"conversations": [{"from": "human", "value": "q"}]}]`))
	f.Add([]byte("[\n{\"conversations\": [,]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := ParseShareGPT("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json:") {
				t.Fatalf("error does not name the file and line: %v", err)
			}
			return
		}
		checkTurns(t, convs)
	})
}
