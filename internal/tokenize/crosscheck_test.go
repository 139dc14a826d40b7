package tokenize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// cl100kSplit is cl100k_base's pre-tokenizer pattern, the one Llama-3's
// tokenizer.json also uses.
const cl100kSplit = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// tiktokenAsHF converts the cl100k_base ranks into a tokenizer.json, the
// way Llama-3's file was made from its tiktoken ranks.
func tiktokenAsHF(t testing.TB) []byte {
	t.Helper()
	codec, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	var tokens []string
	for id := 0; ; id++ {
		s, err := codec.Decode([]uint{uint(id)})
		if err != nil {
			break
		}
		rank[s] = id
		tokens = append(tokens, s)
	}
	// Every split of a token into two tokens becomes a merge at the token's
	// rank, as the Hugging Face converter for tiktoken files does.
	vocab := map[string]int{}
	var merges [][2]string
	for id, tok := range tokens {
		vocab[mapBytes(tok)] = id
		var local [][2]string
		for i := 1; i < len(tok); i++ {
			_, okL := rank[tok[:i]]
			_, okR := rank[tok[i:]]
			if okL && okR {
				local = append(local, [2]string{tok[:i], tok[i:]})
			}
		}
		sort.Slice(local, func(i, j int) bool {
			if rank[local[i][0]] != rank[local[j][0]] {
				return rank[local[i][0]] < rank[local[j][0]]
			}
			return rank[local[i][1]] < rank[local[j][1]]
		})
		for _, m := range local {
			merges = append(merges, [2]string{mapBytes(m[0]), mapBytes(m[1])})
		}
	}
	file := map[string]any{
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": cl100kSplit}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": true},
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHFMatchesTiktoken loads cl100k_base as a tokenizer.json and checks
// that this package's BPE gives tiktoken's ids on English, code and
// multilingual text: the merge order, the regex and the byte mapping on a
// real 100k vocabulary.
func TestHFMatchesTiktoken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100k-token tokenizer.json")
	}
	h, err := ParseHF(tiktokenAsHF(t))
	if err != nil {
		t.Fatal(err)
	}
	codec, _ := tokenizer.Get(tokenizer.Cl100kBase)
	texts := []string{wordsFile, "Héllo wörld — naïve café, 東京 2024年! 😀👍🏽\n\n\tindent   spaces\r\n", "don't I'LL we've 1234567 3.14159"}
	srcs, _ := filepath.Glob("*.go")
	for _, f := range srcs {
		b, _ := os.ReadFile(f)
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		want, _, _ := codec.Encode(text)
		got, err := h.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%q…: %d tokens, tiktoken %d", clip(text, 30), len(got), len(want))
			continue
		}
		for i := range got {
			if uint(got[i]) != want[i] {
				t.Errorf("%q…: token %d is %d, tiktoken %d", clip(text, 30), i, got[i], want[i])
				break
			}
		}
	}
}
