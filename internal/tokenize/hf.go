package tokenize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/servebench/servebench/internal/record"
)

// HF counts tokens with a Hugging Face tokenizer.json whose model is BPE:
// byte-level BPE with a pre-tokenizer regex (Llama-3, Qwen, Mistral-Nemo,
// DeepSeek) and SentencePiece-style BPE with the ▁ metaspace and byte
// fallback (Llama-2, Mistral-7B). Any other component is refused with an
// error that names it. Safe for concurrent use.
//
// Known approximation: added tokens are matched on the raw text, ignoring
// their lstrip, rstrip and single_word flags.
type HF struct {
	// AddSpecial counts the special tokens the post-processor adds around a
	// single sequence (a Llama BOS), as a server does for a completions
	// request; LoadHF and ParseHF set it.
	AddSpecial bool

	name    string
	added   *addedMatcher
	norm    []normalizer
	pre     []preTokenizer
	model   *bpe
	special int
}

// LoadHF reads a tokenizer.json file.
func LoadHF(path string) (*HF, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tokenizer: %w", err)
	}
	h, err := ParseHF(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	// Name the model by its folder (…/Meta-Llama-3-8B/tokenizer.json).
	name := filepath.Base(path)
	if dir := filepath.Base(filepath.Dir(path)); name == "tokenizer.json" && dir != "." && dir != string(filepath.Separator) {
		name = dir
	}
	h.name = "hf:" + name
	return h, nil
}

// ParseHF parses the contents of a tokenizer.json file.
func ParseHF(data []byte) (*HF, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	h := &HF{AddSpecial: true, name: "hf"}
	var err error
	if h.model, err = newBPE(f.Model); err != nil {
		return nil, err
	}
	if h.norm, err = parseNormalizer(f.Normalizer, 0); err != nil {
		return nil, err
	}
	if h.pre, err = parsePreTokenizer(f.PreTokenizer, 0); err != nil {
		return nil, err
	}
	if h.special, err = parsePostProcessor(f.PostProcessor, 0); err != nil {
		return nil, err
	}
	h.added = newAddedMatcher(f.AddedTokens)
	return h, nil
}

// Encode returns the token ids of text, without the post-processor's
// special tokens.
func (h *HF) Encode(text string) ([]int, error) {
	var ids []int
	start := true
	for _, seg := range h.added.split(text) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			start = false
			continue
		}
		var err error
		if ids, err = h.encodeSegment(ids, seg.text, start); err != nil {
			return nil, err
		}
		start = false
	}
	return ids, nil
}

func (h *HF) encodeSegment(ids []int, text string, atStart bool) ([]int, error) {
	var err error
	for _, n := range h.norm {
		if text, err = n(text); err != nil {
			return nil, err
		}
	}
	pieces := []string{text}
	for _, p := range h.pre {
		if pieces, err = p(pieces, atStart); err != nil {
			return nil, err
		}
	}
	for _, piece := range pieces {
		ids = h.model.encodeWord(ids, piece)
	}
	return ids, nil
}

// Count returns the number of tokens in text, plus the special tokens the
// post-processor adds when AddSpecial is set.
func (h *HF) Count(_ context.Context, text string) (int, error) {
	ids, err := h.Encode(text)
	if err != nil {
		return 0, err
	}
	if h.AddSpecial {
		return len(ids) + h.special, nil
	}
	return len(ids), nil
}

// SpecialTokens returns how many tokens the post-processor adds to a single
// sequence (1 for a Llama BOS, 0 for Qwen).
func (h *HF) SpecialTokens() int { return h.special }

// Name returns "hf:" and the model folder's name (LoadHF), or "hf" (ParseHF).
func (h *HF) Name() string { return h.name }

// Source returns record.SourceLocal.
func (h *HF) Source() string { return record.SourceLocal }

// hfFile is the subset of tokenizer.json this package reads.
type hfFile struct {
	AddedTokens   []hfAdded       `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         json.RawMessage `json:"model"`
}

type hfAdded struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
}

// hfComponent holds the fields of any normalizer, pre-tokenizer or
// post-processor; which ones matter depends on Type.
type hfComponent struct {
	Type string `json:"type"`

	Normalizers []json.RawMessage `json:"normalizers"`
	Prepend     string            `json:"prepend"`
	Pattern     *hfPattern        `json:"pattern"`
	Content     string            `json:"content"`
	Left        bool              `json:"strip_left"`
	Right       bool              `json:"strip_right"`

	Pretokenizers    []json.RawMessage `json:"pretokenizers"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	UseRegex         *bool             `json:"use_regex"`
	Behavior         string            `json:"behavior"`
	Invert           bool              `json:"invert"`
	Replacement      *string           `json:"replacement"`
	PrependScheme    string            `json:"prepend_scheme"`
	Split            *bool             `json:"split"`
	IndividualDigits bool              `json:"individual_digits"`

	Processors    []json.RawMessage          `json:"processors"`
	Single        []json.RawMessage          `json:"single"`
	SpecialTokens map[string]hfSpecialTokens `json:"special_tokens"`
}

type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

type hfSpecialTokens struct {
	IDs []int `json:"ids"`
}

// maxNesting bounds Sequence-in-Sequence recursion in a hostile file.
const maxNesting = 8

// component decodes raw into c; ok is false for a null or absent component.
func component(raw json.RawMessage, depth int) (c hfComponent, ok bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return c, false, nil
	}
	if depth > maxNesting {
		return c, false, errors.New("components nested too deeply")
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, false, err
	}
	return c, true, nil
}

// parsePostProcessor returns how many special tokens the post-processor
// adds to a single sequence.
func parsePostProcessor(raw json.RawMessage, depth int) (int, error) {
	c, ok, err := component(raw, depth)
	if err != nil || !ok {
		return 0, wrapComponent("post_processor", err)
	}
	switch c.Type {
	case "ByteLevel":
		return 0, nil
	case "RobertaProcessing", "BertProcessing":
		return 2, nil
	case "TemplateProcessing":
		return templateSpecials(c)
	case "Sequence":
		n := 0
		for _, p := range c.Processors {
			k, err := parsePostProcessor(p, depth+1)
			if err != nil {
				return 0, err
			}
			n += k
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: post_processor %q", ErrUnsupported, c.Type)
}

func templateSpecials(c hfComponent) (int, error) {
	n := 0
	for _, piece := range c.Single {
		var p struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
		}
		if err := json.Unmarshal(piece, &p); err != nil {
			return 0, wrapComponent("post_processor", err)
		}
		if p.SpecialToken == nil {
			continue
		}
		if st, ok := c.SpecialTokens[p.SpecialToken.ID]; ok && len(st.IDs) > 0 {
			n += len(st.IDs)
		} else {
			n++
		}
	}
	return n, nil
}

func wrapComponent(what string, err error) error {
	if err == nil || errors.Is(err, ErrUnsupported) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// addedMatcher splits text around added tokens, leftmost-longest first.
type addedMatcher struct {
	byFirst map[byte][]hfAdded // longest content first
}

type segment struct {
	text string
	id   int // -1 for ordinary text
}

func newAddedMatcher(tokens []hfAdded) *addedMatcher {
	m := &addedMatcher{byFirst: map[byte][]hfAdded{}}
	for _, t := range tokens {
		if t.Content != "" {
			m.byFirst[t.Content[0]] = append(m.byFirst[t.Content[0]], t)
		}
	}
	for _, ts := range m.byFirst {
		sort.SliceStable(ts, func(i, j int) bool { return len(ts[i].Content) > len(ts[j].Content) })
	}
	return m
}

func (m *addedMatcher) split(text string) []segment {
	if len(m.byFirst) == 0 {
		return []segment{{text: text, id: -1}}
	}
	var segs []segment
	last := 0
	for i := 0; i < len(text); i++ {
		for _, t := range m.byFirst[text[i]] {
			if len(text)-i < len(t.Content) || text[i:i+len(t.Content)] != t.Content {
				continue
			}
			if last < i {
				segs = append(segs, segment{text: text[last:i], id: -1})
			}
			segs = append(segs, segment{text: t.Content, id: t.ID})
			i += len(t.Content) - 1
			last = i + 1
			break
		}
	}
	if last < len(text) || len(segs) == 0 {
		segs = append(segs, segment{text: text[last:], id: -1})
	}
	return segs
}
