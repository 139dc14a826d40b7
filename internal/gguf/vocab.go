package gguf

import (
	"fmt"
	"strings"
)

// SentencePiece token types, as llama.cpp numbers them
// (tokenizer.ggml.token_type).
const (
	TokenNormal  int32 = 1
	TokenUnknown int32 = 2
	TokenControl int32 = 3
	TokenByte    int32 = 6
)

// Special token ids of the vocabularies this package builds.
const (
	TokenIDUnk = 0
	TokenIDBOS = 1
	TokenIDEOS = 2
)

// sentencePieceSpace is how SentencePiece writes a leading space.
const sentencePieceSpace = "▁"

// commonWords are word pieces, most frequent first, so that a prompt of
// ordinary English tokenizes to words rather than to bytes.
var commonWords = strings.Fields(`
the of and to a in is it you that he was for on are with as I his they be
at one have this from or had by not word but what some we can out other were
all there when up use your how said an each she which do their time if will
way about many then them write would like so these her long make thing see
him two has look more day could go come did number sound no most people my
over know water than call first who may down side been now find any new work
part take get place made live where after back little only round man year
came show every good me give our under name very through just form sentence
great think say help low line differ turn cause much mean before move right
boy old too same tell does set three want air well also play small end put
home read hand port large spell add even land here must big high such follow
act why ask men change went light kind off need house picture try us again
animal point mother world near build self earth father head stand own page
should country found answer school grow study still learn plant cover food
sun four between state keep eye never last let thought city tree cross farm
hard start might story saw far sea draw left late run while press close night
real life few north open seem together next white children begin got walk
example ease paper group always music those both mark often letter until mile
river car feet care second book carry took science eat room friend began idea
fish mountain stop once base hear horse cut sure watch color face wood main
enough plain girl usual young ready above ever red list though feel talk bird
soon body dog family direct pose leave song measure door product black short
numeral class wind question happen complete ship area half rock order fire
south problem piece told knew pass since top whole king space heard best hour
better true during hundred five remember step early hold west ground interest
reach fast verb sing listen six table travel less morning ten simple several
vowel toward war lay against pattern slow center love person money serve
appear road map rain rule govern pull cold notice voice unit power town fine
certain fly fall lead cry dark machine note wait plan figure star box noun
field rest correct able pound done beauty drive stood contain front teach week
final gave green oh quick develop ocean warm free minute strong special mind
behind clear tail produce fact street inch multiply nothing course stay wheel
full force blue object decide surface deep moon island foot system busy test
record boat common gold possible plane stead dry wonder laugh thousand ago ran
check game shape equate hot miss brought heat snow tire bring yes distant fill
east paint language among`)

// MaxVocabWords is how many word pieces BuildVocab can add.
var MaxVocabWords = len(commonWords)

// Vocab is a SentencePiece ("llama") vocabulary in GGUF's parallel arrays.
type Vocab struct {
	Tokens []string
	Scores []float32
	Types  []int32
	seen   map[string]bool
}

// BuildVocab returns <unk>, <s>, </s>, the 256 byte tokens <0x00>…<0xFF>,
// "▁", the printable ASCII characters with and without a leading "▁", and
// the first words of commonWords with a leading "▁", each preceded by its
// prefixes: SentencePiece (as llama.cpp runs it) builds a word by merging
// adjacent pieces into pieces of the vocabulary, so "▁the" is reachable only
// through "▁th". Scores rank commoner words first.
func BuildVocab(words int) (*Vocab, error) {
	if words < 0 || words > MaxVocabWords {
		return nil, fmt.Errorf("vocabulary words: %d is outside 0..%d", words, MaxVocabWords)
	}
	v := &Vocab{seen: map[string]bool{}}
	v.add("<unk>", 0, TokenUnknown)
	v.add("<s>", 0, TokenControl)
	v.add("</s>", 0, TokenControl)
	for b := range 256 {
		v.add(fmt.Sprintf("<0x%02X>", b), 0, TokenByte)
	}
	v.add(sentencePieceSpace, -1000, TokenNormal)
	for c := byte('!'); c <= '~'; c++ {
		v.add(string(c), -1000, TokenNormal)
		v.add(sentencePieceSpace+string(c), -999, TokenNormal)
	}
	for i, w := range commonWords[:words] {
		for k := 2; k <= len(w); k++ {
			v.add(sentencePieceSpace+w[:k], float32(-i), TokenNormal)
		}
	}
	return v, nil
}

// add appends a token unless it is there already (a prefix of one word is
// often another word or another word's prefix).
func (v *Vocab) add(tok string, score float32, typ int32) {
	if v.seen[tok] {
		return
	}
	v.seen[tok] = true
	v.Tokens = append(v.Tokens, tok)
	v.Scores = append(v.Scores, score)
	v.Types = append(v.Types, typ)
}
