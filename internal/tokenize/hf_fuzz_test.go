package tokenize

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParseHF feeds arbitrary bytes to the tokenizer.json loader and, when
// they load, encodes a few texts: errors are fine, panics and hangs are not.
func FuzzParseHF(f *testing.F) {
	for _, name := range []string{"bytelevel.json", "sentencepiece.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]},` +
		`"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(a+)+$"},"behavior":"MergedWithNext","invert":true},` +
		`"normalizer":{"type":"Replace","pattern":{"Regex":"b*"},"content":"ab"}}`))
	f.Add([]byte(`{"model":{"merges":["a b"],"vocab":{"a":0,"b":1,"ab":2}},"added_tokens":[{"id":9,"content":"a"}]}`))
	regexTimeout = 50 * time.Millisecond // hostile patterns fail fast here
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHF(data)
		if err != nil {
			return
		}
		for _, text := range []string{"", "hello world", "ab ab\n\t 123 €", string(data[:min(len(data), 64)])} {
			ids, err := h.Encode(text)
			if err == nil && text == "" && len(ids) > 0 {
				t.Errorf("empty text gave tokens %v", ids)
			}
		}
	})
}

// FuzzHFEncode feeds arbitrary text to both fixtures: every input encodes,
// and encoding is deterministic.
func FuzzHFEncode(f *testing.F) {
	bl, sp := loadFixture(f, "bytelevel.json"), loadFixture(f, "sentencepiece.json")
	for _, s := range []string{"hello world", "<|begin_of_text|><s>", "h€\x00\xff", "  \n\n 12345 hello's", "▁▁"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, h := range []*HF{bl, sp} {
			a, errA := h.Encode(text)
			b, errB := h.Encode(text)
			if errA != nil || errB != nil {
				t.Fatalf("%q: %v, %v", text, errA, errB)
			}
			if len(a) != len(b) {
				t.Fatalf("%q: %d then %d tokens", text, len(a), len(b))
			}
		}
	})
}
