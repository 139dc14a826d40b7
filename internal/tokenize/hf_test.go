package tokenize

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func loadFixture(t testing.TB, name string) *HF {
	t.Helper()
	h, err := LoadHF(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// editFixture loads a fixture as a generic JSON tree, lets edit change it,
// and parses the result.
func editFixture(t *testing.T, name string, edit func(map[string]any)) (*HF, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	edit(tree)
	if data, err = json.Marshal(tree); err != nil {
		t.Fatal(err)
	}
	return ParseHF(data)
}

// The expected ids below are worked out by hand from the fixtures' merge
// ranks (testdata/*.json): lowest rank first, leftmost first on ties.

func TestHFByteLevel(t *testing.T) {
	h := loadFixture(t, "bytelevel.json")
	cases := []struct {
		text string
		want []int
	}{
		{"", nil},                                  // empty text, no tokens
		{"hello world", []int{16, 21}},             // "hello" (ignore_merges), "Ġworld" by five merges
		{"hello world!", []int{16, 21, 8}},         // punctuation is its own pre-token
		{"1234", []int{22, 11, 12}},                // digits split in threes: "123" → 12,3; "4"
		{"hello  world", []int{16, 4, 21}},         // \s+(?!\S) leaves one space before " world"
		{"lo", []int{23}},                          // in vocab, no merge reaches it: ignore_merges
		{"héllo", []int{0, 13, 3}},                 // é's bytes are not in vocab and there is no unk: dropped
		{"<|begin_of_text|>hello", []int{100, 16}}, // added token matched before pre-tokenizing
	}
	for _, c := range cases {
		got, err := h.Encode(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %v, want %v", c.text, got, c.want)
		}
	}
	if n, _ := h.Count(context.Background(), "hello world"); n != 3 {
		t.Errorf("Count with the BOS template: got %d, want 3", n)
	}
	if h.SpecialTokens() != 1 || h.Name() != "hf:bytelevel.json" {
		t.Errorf("got %d special tokens, name %q", h.SpecialTokens(), h.Name())
	}
}

func TestHFByteLevelWithoutIgnoreMerges(t *testing.T) {
	h, err := editFixture(t, "bytelevel.json", func(m map[string]any) {
		m["model"].(map[string]any)["ignore_merges"] = false
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := h.Encode("lo")
	if want := []int{2, 3}; !reflect.DeepEqual(got, want) { // no merge "l o": two tokens
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestHFSentencePiece(t *testing.T) {
	h := loadFixture(t, "sentencepiece.json")
	cases := []struct {
		text string
		want []int
	}{
		{"", nil},                         // Prepend skips empty text
		{"hello world", []int{271, 275}},  // "▁hello▁world": ▁world needs "ld" merged first
		{"hi", []int{267, 3 + 'i'}},       // i is not in vocab: byte fallback <0x69>
		{"h€", []int{267, 229, 133, 175}}, // € = E2 82 AC, three byte tokens
		{"<s>hello", []int{1, 271}},       // added token, then the segment gets its own ▁
		{"hello\x00", []int{271, 3}},      // a control byte falls back too
	}
	for _, c := range cases {
		got, err := h.Encode(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %v, want %v", c.text, got, c.want)
		}
	}
	ctx := context.Background()
	if n, _ := h.Count(ctx, ""); n != 1 {
		t.Errorf("empty prompt with AddSpecial: got %d, want 1 (the BOS)", n)
	}
	h.AddSpecial = false
	if n, _ := h.Count(ctx, "hello world"); n != 2 {
		t.Errorf("without special tokens: got %d, want 2", n)
	}
}

func TestHFMetaspacePreTokenizer(t *testing.T) {
	// Newer Mistral files: no normalizer, a Metaspace pre-tokenizer instead.
	for _, split := range []bool{false, true} {
		h, err := editFixture(t, "sentencepiece.json", func(m map[string]any) {
			m["normalizer"] = nil
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁",
				"prepend_scheme": "first", "split": split}
		})
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			text string
			want []int
		}{
			{"hello world", []int{271, 275}},
			{"<s>hello world", []int{1, 260, 261, 268, 263, 275}}, // "first": no ▁ after an added token
		}
		for _, c := range cases {
			got, err := h.Encode(c.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("split=%v %q: got %v, want %v", split, c.text, got, c.want)
			}
		}
	}
}

func TestHFFuseUnk(t *testing.T) {
	h, err := editFixture(t, "sentencepiece.json", func(m map[string]any) {
		m["model"].(map[string]any)["byte_fallback"] = false
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := h.Encode("hxyz")
	if want := []int{267, 0}; !reflect.DeepEqual(got, want) { // x, y, z fuse into one <unk>
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestHFSplitBehaviors(t *testing.T) {
	ms := [][2]int{{1, 2}, {2, 3}} // "a,,b": both commas match
	cases := []struct {
		behavior string
		invert   bool
		want     []string
	}{
		{"Isolated", false, []string{"a", ",", ",", "b"}},
		{"Removed", false, []string{"a", "b"}},
		{"MergedWithPrevious", false, []string{"a,", ",", "b"}},
		{"MergedWithNext", false, []string{"a", ",", ",b"}},
		{"Contiguous", false, []string{"a", ",,", "b"}},
		{"Removed", true, []string{",", ","}}, // invert: the commas are kept
	}
	for _, c := range cases {
		got := applyBehavior("a,,b", ms, c.behavior, c.invert)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s invert=%v: got %q, want %q", c.behavior, c.invert, got, c.want)
		}
	}
}

// TestHFUnicodeNormalizers: a normalizer named after a Unicode form
// applies it, so a decomposed é (e + U+0301) counts as the composed one
// under NFC; NFD decomposes, and the compatibility forms fold fullwidth
// letters too.
func TestHFUnicodeNormalizers(t *testing.T) {
	const composed, decomposed = "h\u00e9llo", "he\u0301llo"
	cases := []struct {
		form     string
		in, same string // in must encode as same does without a normalizer
	}{
		{"NFC", decomposed, composed},
		{"NFD", composed, decomposed},
		{"NFKC", "\uff48\uff45llo", "hello"}, // fullwidth ｈｅ folds to h, e
		{"NFKD", "\uff48\u00e9llo", decomposed},
	}
	plain := loadFixture(t, "bytelevel.json")
	for _, c := range cases {
		h, err := editFixture(t, "bytelevel.json", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": c.form}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.form, err)
		}
		got, _ := h.Encode(c.in)
		want, _ := plain.Encode(c.same)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q: got %v, want %v (as %q)", c.form, c.in, got, want, c.same)
		}
		if unnormalized, _ := plain.Encode(c.in); reflect.DeepEqual(unnormalized, want) {
			t.Errorf("%s %q: the fixture does not tell the forms apart", c.form, c.in)
		}
	}
}

func TestHFUnsupported(t *testing.T) {
	cases := []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"wordpiece", func(m map[string]any) { m["model"].(map[string]any)["type"] = "WordPiece" }, `model "WordPiece"`},
		{"unigram", func(m map[string]any) { m["model"] = map[string]any{"type": "Unigram", "vocab": []any{}} }, `model "Unigram"`},
		{"precompiled", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Precompiled"} }, `normalizer "Precompiled"`},
		{"bert pre", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "BertPreTokenizer"} }, `pre_tokenizer "BertPreTokenizer"`},
		{"dropout", func(m map[string]any) { m["model"].(map[string]any)["dropout"] = 0.1 }, "dropout"},
	}
	for _, c := range cases {
		_, err := editFixture(t, "bytelevel.json", c.edit)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrUnsupported naming %s", c.name, err, c.want)
		}
	}
}

func TestHFMalformed(t *testing.T) {
	cases := map[string]string{
		"not json":       `{`,
		"no model":       `{}`,
		"bad merge":      `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}`,
		"three parts":    `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a a"]}}`,
		"bad regex":      `{"model":{"type":"BPE","vocab":{}},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"("},"behavior":"Isolated"}}`,
		"bad behavior":   `{"model":{"type":"BPE","vocab":{}},"pre_tokenizer":{"type":"Split","pattern":{"String":" "},"behavior":"Sideways"}}`,
		"wrong types":    `{"model":{"type":"BPE","vocab":[1,2]}}`,
		"deep sequences": `{"model":{"type":"BPE","vocab":{}},"normalizer":` + strings.Repeat(`{"type":"Sequence","normalizers":[`, 20) + strings.Repeat(`]}`, 20) + `}`,
	}
	for name, data := range cases {
		if _, err := ParseHF([]byte(data)); err == nil {
			t.Errorf("%s: got no error", name)
		}
	}
}

func TestLoadHFMissingFile(t *testing.T) {
	if _, err := LoadHF(filepath.Join(t.TempDir(), "tokenizer.json")); err == nil {
		t.Fatal("got no error for a missing file")
	}
}

// TestHFLongWord checks that a whole text left as one word (SentencePiece
// files without a pre-tokenizer) encodes in reasonable time and matches the
// word-by-word encoding.
func TestHFLongWord(t *testing.T) {
	h := loadFixture(t, "sentencepiece.json")
	text := strings.TrimSpace(strings.Repeat("hello world ", 20000))
	got, err := h.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40000 {
		t.Errorf("got %d tokens, want 40000", len(got))
	}
}
