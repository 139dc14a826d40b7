package workload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/tokenize"
)

func TestLoadSampleFiles(t *testing.T) {
	tests := []struct {
		path, format       string
		convs, turns, msgs int
	}{
		{"testdata/prompts.jsonl", FormatJSONL, 8, 8, 2},
		{"testdata/sharegpt_sample.json", FormatShareGPT, 5, 10, 0},
	}
	for _, tt := range tests {
		for _, format := range []string{"", tt.format} { // detected, and named
			d, err := LoadDataset(tt.path, format)
			if err != nil {
				t.Fatal(err)
			}
			turns, msgs := 0, 0
			for _, c := range d.Conversations {
				turns += len(c.Turns)
				for _, tr := range c.Turns {
					if tr.Messages != nil {
						msgs++
					}
				}
			}
			if d.Format != tt.format || len(d.Conversations) != tt.convs || turns != tt.turns || msgs != tt.msgs {
				t.Errorf("%s (format %q): %s, %d conversations, %d turns, %d message lists; want %s, %d, %d, %d",
					tt.path, format, d.Format, len(d.Conversations), turns, msgs, tt.format, tt.convs, tt.turns, tt.msgs)
			}
		}
	}
	// The wrong format named explicitly is an error, not a silent mess.
	if _, err := LoadDataset("testdata/sharegpt_sample.json", FormatJSONL); err == nil || !strings.Contains(err.Error(), "sharegpt_sample.json:1:") {
		t.Errorf("ShareGPT read as JSONL: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, []byte("\n\n"), 0o644)
	if _, err := LoadDataset(empty, ""); err == nil || !strings.Contains(err.Error(), "no prompts") {
		t.Errorf("empty file: %v", err)
	}
}

func datasetWorkload(t *testing.T, spec Spec, chat bool) *Workload {
	t.Helper()
	w, err := New(spec, env(&words{chat: chat}, chat))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// take draws n items from a point's source.
func take(t *testing.T, src Source, n int) []Item {
	t.Helper()
	var out []Item
	for range n {
		it, err := src.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}

func TestDatasetSource(t *testing.T) {
	w := datasetWorkload(t, Spec{Dataset: "testdata/prompts.jsonl", OutputTokens: "33"}, true)
	items := take(t, w.Source(0), 9)
	// File order, then round again.
	if items[0].Prompt != items[8].Prompt || !strings.HasPrefix(items[0].Prompt, "Write a short poem") {
		t.Errorf("sequential order: first %q, ninth %q", items[0].Prompt, items[8].Prompt)
	}
	for i, it := range items {
		// Chat requests are counted whole under the template: 1 BOS + 5 per
		// message + 4 for the generation prompt + the words.
		want := 5 + 5 + wordCount(it.Prompt)
		if it.Messages != nil {
			want = 5
			for _, m := range it.Messages {
				want += 5 + wordCount(m.Content)
			}
		}
		if it.Want != want || it.Tokens != want || !it.Templated {
			t.Errorf("item %d: want %d tokens %d templated %v; counted %d", i, it.Want, it.Tokens, it.Templated, want)
		}
	}
	// The file's lengths win; a line without one draws from --output-tokens.
	if items[0].MaxTokens != 64 || items[2].MaxTokens != 33 || items[3].MaxTokens != 90 {
		t.Errorf("output lengths %d %d %d, want 64 33 90", items[0].MaxTokens, items[2].MaxTokens, items[3].MaxTokens)
	}

	// Shuffled: a seeded permutation, each point its own, every entry once
	// per pass.
	ws := datasetWorkload(t, Spec{Dataset: "testdata/prompts.jsonl", Order: OrderShuffle}, true)
	a, b, again := take(t, ws.Source(0), 8), take(t, ws.Source(1), 8), take(t, ws.Source(0), 8)
	seen := map[string]bool{}
	same, inFileOrder := true, true
	for i := range a {
		key := a[i].Prompt
		if a[i].Messages != nil {
			key = a[i].Messages[len(a[i].Messages)-1].Content
		}
		seen[key] = true
		same = same && a[i].Want == again[i].Want
		inFileOrder = inFileOrder && a[i].Want == items[i].Want && b[i].Want == items[i].Want
	}
	if len(seen) != 8 || !same || inFileOrder {
		t.Errorf("shuffle: %d distinct of 8, reproducible %v, left in file order %v", len(seen), same, inFileOrder)
	}
}

// ShareGPT: each human turn is a prompt of its own; its answer's length
// (counted with the tokenizer, special tokens excluded) is max_tokens.
func TestDatasetShareGPTOutputLengths(t *testing.T) {
	w := datasetWorkload(t, Spec{Dataset: "testdata/sharegpt_sample.json", OutputTokens: "77"}, false)
	d := w.data
	items := take(t, w.Source(0), 10)
	i := 0
	for _, c := range d.Conversations {
		for _, tr := range c.Turns {
			it := items[i]
			want := wordCount(tr.Reply)
			if tr.Reply == "" {
				want = 77
			}
			if it.Prompt != tr.Prompt || it.MaxTokens != want || it.Want != 1+wordCount(tr.Prompt) || it.Templated {
				t.Errorf("turn %d: %q max_tokens %d want %d (prompt %d tokens)", i, it.Prompt, it.MaxTokens, want, it.Want)
			}
			i++
		}
	}
}

func TestDatasetLimits(t *testing.T) {
	// Only prompts of at most 25 tokens: every item obeys, and the source
	// still goes round.
	w := datasetWorkload(t, Spec{Dataset: "testdata/prompts.jsonl", MaxPromptTokens: 25}, true)
	for _, it := range take(t, w.Source(0), 12) {
		if it.Want > 25 {
			t.Errorf("prompt of %d tokens passed --max-prompt-tokens 25", it.Want)
		}
	}
	// prompt + max_tokens over the context are skipped.
	w = datasetWorkload(t, Spec{Dataset: "testdata/prompts.jsonl", ContextTokens: 100}, true)
	for _, it := range take(t, w.Source(0), 12) {
		if it.Want+it.MaxTokens > 100 {
			t.Errorf("%d + %d tokens passed --context-tokens 100", it.Want, it.MaxTokens)
		}
	}
	// Nothing fits: an error, not a hang.
	w = datasetWorkload(t, Spec{Dataset: "testdata/prompts.jsonl", MaxPromptTokens: 3}, true)
	if _, err := w.Source(0).Next(context.Background()); !errors.Is(err, errNoFit) || !strings.Contains(err.Error(), "prompts.jsonl") {
		t.Errorf("nothing fits: %v", err)
	}
}

func TestDatasetNeedsChatForMessages(t *testing.T) {
	_, err := New(Spec{Dataset: "testdata/prompts.jsonl"}, env(&words{}, false))
	var se *SpecError
	if !errors.As(err, &se) || se.Flag != "dataset" || !strings.Contains(err.Error(), "prompts.jsonl:4: chat messages need a chat API") {
		t.Errorf("messages to a completions API: %v", err)
	}
}

// A server counter costs a round trip per count: each prompt is counted
// once however many points read it.
func TestDatasetCountsOnce(t *testing.T) {
	c := &words{chat: true}
	w, err := New(Spec{Dataset: "testdata/prompts.jsonl"}, env(c, true))
	if err != nil {
		t.Fatal(err)
	}
	take(t, w.Source(0), 8)
	first := c.counts.Load()
	take(t, w.Source(1), 16)
	if c.counts.Load() != first {
		t.Errorf("counts went from %d to %d reading the file again", first, c.counts.Load())
	}
}

var _ tokenize.ChatCounter = (*words)(nil)
