package sim

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
)

// The simulator's tokenizer: one token per whitespace-separated word, so a
// client can build a prompt of an exact length. Special tokens follow
// Llama 3's template in count:
//
//	completions prompt: 1 (BOS) + words
//	chat:               1 (BOS) + Σ (messageOverhead + words of content)
//	                    + generationPrompt (the assistant header)
const (
	bosTokens        = 1 // <|begin_of_text|>
	messageOverhead  = 5 // <|start_header_id|> role <|end_header_id|> "\n\n" … <|eot_id|>
	generationPrompt = 4 // <|start_header_id|> assistant <|end_header_id|> "\n\n"
)

// Token ids: vocabulary words are 0…len(vocab)-1; any other word hashes to
// a stable id in [wordIDBase, specialIDBase); specials sit at specialIDBase+.
const (
	wordIDBase    = 1000
	specialIDBase = 128000
)

// vocab is the generator's fixed vocabulary: each generated token is one
// of these words.
var vocab = strings.Fields(`the a of and to in is that it for on with as was by at
from this be are or an not but which have has had one all their there been were
model token server batch cache queue time step load fast slow memory compute
request stream answer question simple small large first last next each more most
data value result test run`)

// countWords is the number of tokens in plain text.
func countWords(s string) int { return len(strings.Fields(s)) }

// wordIDs appends the token ids of s.
func wordIDs(ids []int, s string) []int {
	for _, w := range strings.Fields(s) {
		ids = append(ids, wordID(w))
	}
	return ids
}

var vocabIndex = func() map[string]int {
	m := make(map[string]int, len(vocab))
	for i, w := range vocab {
		m[w] = i
	}
	return m
}()

func wordID(w string) int {
	if i, ok := vocabIndex[w]; ok {
		return i
	}
	h := fnv.New32a()
	h.Write([]byte(w))
	return wordIDBase + int(h.Sum32()%(specialIDBase-wordIDBase))
}

// idText is the inverse of wordID where one exists.
func idText(id int) string {
	switch {
	case id >= 0 && id < len(vocab):
		return vocab[id]
	case id >= specialIDBase:
		return "<|special|>"
	}
	return "<unk>"
}

// chatMessage is an OpenAI or Ollama chat message; content is a string or
// a list of parts of which text parts count.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns the message's text content.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// chatIDs are the token ids of a chat under the template above.
func chatIDs(msgs []chatMessage, addGenerationPrompt bool) []int {
	ids := []int{specialIDBase}
	for _, m := range msgs {
		ids = append(ids, specialIDBase+6, wordID(m.Role), specialIDBase+7, specialIDBase+271)
		ids = wordIDs(ids, m.text())
		ids = append(ids, specialIDBase+9)
	}
	if addGenerationPrompt {
		ids = append(ids, specialIDBase+6, wordID("assistant"), specialIDBase+7, specialIDBase+271)
	}
	return ids
}

// chatTokens counts a chat's prompt tokens.
func chatTokens(msgs []chatMessage) int {
	n := bosTokens + generationPrompt
	for _, m := range msgs {
		n += messageOverhead + countWords(m.text())
	}
	return n
}

// textGen produces a request's output words and natural length from a
// per-request seed, so the same seed and request order give the same text.
type textGen struct{ rng *rand.Rand }

func newTextGen(seed int64, salt uint64) *textGen {
	return &textGen{rng: rand.New(rand.NewPCG(uint64(seed), salt))}
}

// word returns the next word, with a leading space after the first.
func (g *textGen) word(first bool) string {
	w := vocab[g.rng.IntN(len(vocab))]
	if first {
		return w
	}
	return " " + w
}

// naturalLength draws where the model would emit end-of-sequence: a
// geometric length with the given mean (≥ 1); 0 means never.
func (g *textGen) naturalLength(mean float64) int {
	if mean <= 0 {
		return math.MaxInt
	}
	u := g.rng.Float64()
	return 1 + int(math.Floor(math.Log1p(-u)/math.Log1p(-1/math.Max(mean, 1.000001))))
}
