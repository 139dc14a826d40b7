package tokenize

import (
	"context"
	"fmt"

	"github.com/servebench/servebench/internal/record"
	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// DefaultEncoding is the local tokenizer used when nothing better is known:
// o200k_base is what current OpenAI models use and, being large, lands close
// to modern open models' counts for English text.
const DefaultEncoding = "o200k_base"

// Tiktoken counts tokens with an OpenAI BPE encoding. The ranks are compiled
// into the binary, so it works offline. Safe for concurrent use.
type Tiktoken struct {
	codec tokenizer.Codec
}

// NewTiktoken returns a counter for encoding ("cl100k_base" or "o200k_base").
func NewTiktoken(encoding string) (*Tiktoken, error) {
	switch encoding {
	case string(tokenizer.Cl100kBase), string(tokenizer.O200kBase):
	default:
		return nil, fmt.Errorf("tiktoken encoding %q: want cl100k_base or o200k_base", encoding)
	}
	// The codecs are built directly: tokenizer.Get names every encoding the
	// library has, which links the two servebench never loads (r50k_base,
	// p50k_base), 2.5 MB of vocabulary in the binary.
	var c *codec.Codec
	if encoding == string(tokenizer.Cl100kBase) {
		c = codec.NewCl100kBase()
	} else {
		c = codec.NewO200kBase()
	}
	// A server receives text through JSON, where invalid UTF-8 becomes
	// U+FFFD; count what it will see.
	c.SetErrorMode(tokenizer.ErrorModeReplace)
	return &Tiktoken{codec: c}, nil
}

// Count returns the number of tokens in text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as servers do for prompts.
func (t *Tiktoken) Count(_ context.Context, text string) (int, error) {
	return t.codec.Count(text)
}

// Name returns "tiktoken:" and the encoding.
func (t *Tiktoken) Name() string { return "tiktoken:" + t.codec.GetName() }

// Source returns record.SourceLocal.
func (t *Tiktoken) Source() string { return record.SourceLocal }
