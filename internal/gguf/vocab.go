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
// ordinary English tokenizes to words rather than to bytes. They start with
// every word servebench builds synthetic prompts from (internal/tokenize's
// words.txt; a test keeps the two in step), so a prompt sized with a local
// tokenizer is about as long in this model's tokens.
var commonWords = strings.Fields(`
time year people way day man thing woman life child world school state family
student group country problem hand part place case week company system program
question work government number night point home water room mother area money
story fact month lot right study book eye job word business issue side kind
head house service friend father power hour game line end member law car city
community name president team minute idea kid body information back parent
face others level office door health person art war history party result
change morning reason research girl guy moment air teacher force education
foot boy age policy process music market sense nation plan college interest
death experience effect class control care field development role effort rate
heart drug show leader light voice wife police mind price report decision son
view relationship town road arm difference value building action model season
society tax director position player record paper space ground form event
official matter center couple site project activity star table need court oil
situation cost industry figure street image phone data picture practice piece
land product doctor wall patient worker news test movie north love support
technology step baby computer type attention film tree source organization
hair window evidence population truth song fire floor ability chance loss rule
stage network summer focus energy be have do say go get make know think take
see come want look use find give tell ask seem feel try leave call keep let
begin help talk turn start hear play run move like live believe hold bring
happen write provide sit stand lose pay meet include continue set learn lead
understand watch follow stop create speak read allow add spend grow open walk
win offer remember consider appear buy wait serve die send expect build stay
fall cut reach kill remain suggest raise pass sell require decide return
explain hope develop carry break receive agree hit produce eat cover catch
draw choose wish drop push close good new first last long great little own
other old big high different small large next early young important few public
bad same able late hard major better economic strong possible whole free
military true federal international full special easy clear recent certain
personal red difficult available likely short single medical current wrong
private past foreign fine common poor natural significant similar hot dead
central happy serious ready simple left physical general environmental
financial blue democratic dark various entire legal religious cold final main
green nice huge popular traditional cultural up so out just now how then more
also here well only very even there down still in as too when never really
most on why about over again where off always today all far together often
ever almost later much once least ago yet around quite rather the of and to a
that it for with at by from this but or an not what were we can been has if
will one them some could into than its after two our because any these us
river mountain garden kitchen bridge forest island ocean valley desert village
harbor castle meadow candle basket pencil letter bottle button ladder mirror
pocket rabbit turtle dragon tiger horse eagle wolf bear lion whale salmon
apple lemon orange bread butter cheese coffee honey pepper sugar salt onion
potato carrot tomato silver golden wooden quiet gentle brave clever proud calm
busy bright warm soft loud sharp sweet fresh smooth rough empty heavy thin
wide deep narrow tall travel sing dance paint cook climb swim jump laugh smile
listen answer wonder visit dream sleep wake shine rain snow wind cloud storm
thunder sky moon sun planet is you he was are I his they had your said each
she which their many would her him did sound no my who may made round came
every me under through sentence low differ cause mean before does three put
port spell must such act men went animal near self earth page should found
plant food four between thought cross farm might saw sea while press real
white children got example ease those both mark until mile feet second took
science began fish base sure color wood enough plain usual above list though
bird soon dog direct pose measure black numeral complete ship half rock order
south told knew since top king heard best during hundred five west fast verb
six less ten several vowel toward lay against pattern slow map govern pull
notice unit fly cry machine note box noun rest correct pound done beauty drive
stood contain front teach gave oh quick behind tail inch multiply nothing
course wheel object surface boat gold plane stead dry thousand ran check shape
equate miss brought heat tire yes distant fill east language among`)

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
