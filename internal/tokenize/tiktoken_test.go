package tokenize

import (
	"context"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

func TestTiktokenCounts(t *testing.T) {
	// Token counts from OpenAI's tiktoken for the same strings.
	cases := []struct {
		encoding, text string
		want           int
	}{
		{"cl100k_base", "", 0},               // nothing, not even a special token
		{"cl100k_base", "hello world", 2},    // [15339 1917]
		{"cl100k_base", "Hello, world!", 4},  // [9906 11 1917 0]
		{"o200k_base", "Hello, world!", 4},   // [13225 11 2375 0]
		{"o200k_base", "The quick brown", 3}, // one token per common word
		{"cl100k_base", "<|endoftext|>", 7},  // special-token text counts as text
		{"cl100k_base", "\xff", 1},           // invalid UTF-8 counts as U+FFFD, as a server sees it
	}
	for _, c := range cases {
		tk, err := NewTiktoken(c.encoding)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tk.Count(context.Background(), c.text)
		if err != nil {
			t.Fatalf("%s %q: %v", c.encoding, c.text, err)
		}
		if got != c.want {
			t.Errorf("%s %q: got %d tokens, want %d", c.encoding, c.text, got, c.want)
		}
		if tk.Source() != record.SourceLocal || tk.Name() != "tiktoken:"+c.encoding {
			t.Errorf("got source %q name %q", tk.Source(), tk.Name())
		}
	}
}

func TestTiktokenUnknownEncoding(t *testing.T) {
	if _, err := NewTiktoken("p50k_base"); err == nil {
		t.Fatal("got no error for an encoding servebench does not offer")
	}
}
