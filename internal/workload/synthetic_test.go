package workload

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/tokenize"
	"github.com/tiktoken-go/tokenizer"
)

// Prompts with a shared prefix really share their first K tokens under the
// tokenizer, prompts of different groups do not, and every prompt is
// exactly as long as asked.
func TestSharedPrefixTokens(t *testing.T) {
	tk, err := tokenize.NewTiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	const k, groups = 60, 3
	w, err := New(Spec{SharedPrefix: k, PrefixGroups: groups, PromptTokens: "uniform:100,200", OutputTokens: "8"}, env(tk, false))
	if err != nil {
		t.Fatal(err)
	}
	firstK := map[string]int{} // first K token ids → prompts that start so
	for _, it := range take(t, w.Source(0), 30) {
		ids, _, err := codec.Encode(it.Prompt)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != it.Want || it.Tokens != it.Want {
			t.Errorf("prompt of %d tokens (Tokens %d), asked %d", len(ids), it.Tokens, it.Want)
		}
		firstK[fmt.Sprint(ids[:k])]++
	}
	if len(firstK) != groups {
		t.Errorf("%d distinct %d-token prefixes, want %d", len(firstK), k, groups)
	}
	for p, n := range firstK {
		if n < 2 {
			t.Errorf("prefix %.30s… starts only %d prompt(s)", p, n)
		}
	}
	// The next point reuses the same prefixes (a cache warmed by one point
	// serves the next).
	for _, it := range take(t, w.Source(1), 5) {
		ids, _, _ := codec.Encode(it.Prompt)
		if firstK[fmt.Sprint(ids[:k])] == 0 {
			t.Errorf("point 1 prompt with a prefix point 0 never used")
		}
	}
}

// For a chat API the length includes the template when the counter can
// count it, so a shared-prefix chat request is as long as asked.
func TestSharedPrefixChat(t *testing.T) {
	c := &words{chat: true}
	w, err := New(Spec{SharedPrefix: 40, PromptTokens: "120", OutputTokens: "8"}, env(c, true))
	if err != nil {
		t.Fatal(err)
	}
	items := take(t, w.Source(0), 6)
	prefix := strings.Join(strings.Fields(items[0].Prompt)[:39], " ") // 40 tokens: BOS + 39 words
	for _, it := range items {
		n, _, _ := c.CountChat(context.Background(), user(it.Prompt))
		if n != 120 || it.Tokens != 120 || !it.Templated {
			t.Errorf("chat request of %d tokens (Tokens %d, templated %v), want 120", n, it.Tokens, it.Templated)
		}
		if !strings.HasPrefix(it.Prompt, prefix) {
			t.Errorf("prompt does not start with the shared prefix: %.60q", it.Prompt)
		}
	}
}

// --long-context N: prompt + max_tokens is exactly N for every request.
func TestLongContextExact(t *testing.T) {
	tk, _ := tokenize.NewTiktoken("cl100k_base")
	for _, tt := range []struct {
		name    string
		counter tokenize.Counter
		chat    bool
	}{{"completions", tk, false}, {"chat, content counted", tk, true}, {"chat, template counted", &words{chat: true}, true}} {
		w, err := New(Spec{LongContext: 3000, OutputTokens: "uniform:16,64"}, env(tt.counter, tt.chat))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range take(t, w.Source(0), 5) {
			if it.Want+it.MaxTokens != 3000 || it.Tokens != it.Want || it.MaxTokens < 16 || it.MaxTokens > 64 {
				t.Errorf("%s: prompt %d (counted %d) + output %d, want a total of 3000", tt.name, it.Want, it.Tokens, it.MaxTokens)
			}
		}
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		flag string // "" when valid
		want string
	}{
		{"zero value", Spec{}, "", ""},
		{"everything for sessions", Spec{Dataset: "x.json", Format: "sharegpt", Order: "shuffle", MultiTurn: 4, ThinkTime: 1e9, ContextTokens: 8192, MaxPromptTokens: 4000}, "", ""},
		{"bad prompt dist", Spec{PromptTokens: "zipf:2"}, "prompt-tokens", "unknown kind"},
		{"bad output dist", Spec{OutputTokens: "0"}, "output-tokens", "at least 1"},
		{"negative", Spec{MultiTurn: -1}, "multi-turn", "must not be negative"},
		{"bad format", Spec{Dataset: "x", Format: "csv"}, "dataset-format", "want jsonl or sharegpt"},
		{"format without file", Spec{Format: "jsonl"}, "dataset-format", "give the file"},
		{"order without file", Spec{Order: "shuffle"}, "dataset-order", "give the file"},
		{"prompt limit on synthetic prompts", Spec{MaxPromptTokens: 100}, "max-prompt-tokens", "--prompt-tokens"},
		{"prompt limit on sessions", Spec{MaxPromptTokens: 1000, MultiTurn: 4}, "", ""},
		{"bad order", Spec{Dataset: "x", Order: "random"}, "dataset-order", "sequential or shuffle"},
		{"think without sessions", Spec{ThinkTime: 1e9}, "think-time", "use it with --multi-turn"},
		{"groups without prefix", Spec{PrefixGroups: 4}, "prefix-groups", "--shared-prefix"},
		{"prefix as long as prompts", Spec{SharedPrefix: 512}, "shared-prefix", "prompts can be 512 tokens"},
		{"prefix and unclamped normal", Spec{SharedPrefix: 100, PromptTokens: "normal:1000,100"}, "shared-prefix", "prompts can be 1 tokens"},
		{"prefix and clamped normal", Spec{SharedPrefix: 100, PromptTokens: "normal:1000,100,500,1500"}, "", ""},
		{"prefix with dataset", Spec{SharedPrefix: 10, Dataset: "x"}, "shared-prefix", "--dataset"},
		{"prefix with sessions", Spec{SharedPrefix: 10, MultiTurn: 3}, "shared-prefix", "--multi-turn"},
		{"long with unbounded output", Spec{LongContext: 4096, OutputTokens: "lognormal:100,50"}, "long-context", "bounded --output-tokens"},
		{"long without room", Spec{LongContext: 100, OutputTokens: "100"}, "long-context", "no room"},
		{"long over context", Spec{LongContext: 9000, ContextTokens: 8192}, "long-context", "exceeds --context-tokens"},
		{"long with dataset", Spec{LongContext: 9000, Dataset: "x"}, "long-context", "--dataset"},
		{"long with sessions", Spec{LongContext: 9000, MultiTurn: 2}, "long-context", "--multi-turn"},
		{"long with prefix", Spec{LongContext: 4096, SharedPrefix: 1000}, "", ""},
		{"long leaves no room for prefix", Spec{LongContext: 1100, SharedPrefix: 1000}, "shared-prefix", "prompts can be 972"},
		{"context below first turn", Spec{MultiTurn: 3, ContextTokens: 600}, "context-tokens", "no request fits"},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		var se *SpecError
		switch {
		case tt.flag == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.flag != "" && (!asSpecError(err, &se) || se.Flag != tt.flag || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want --%s mentioning %q", tt.name, err, tt.flag, tt.want)
		}
	}
}
