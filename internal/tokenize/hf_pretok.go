package tokenize

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// unicodeForms are the normalizers named after a Unicode normalization form.
var unicodeForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}

// normalizer rewrites a text segment before pre-tokenization.
type normalizer func(string) (string, error)

// preTokenizer splits pieces further; atStart is true for the segment at the
// start of the input (Metaspace's prepend_scheme "first" needs it).
type preTokenizer func(pieces []string, atStart bool) ([]string, error)

// regexTimeout bounds one regex search over a segment: a hostile pattern in
// a tokenizer.json must fail, not hang a benchmark. A variable so the fuzz
// test can shorten it.
var regexTimeout = 2 * time.Second

func compileRegex(pattern string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", pattern, err)
	}
	re.MatchTimeout = regexTimeout
	return re, nil
}

func parseNormalizer(raw json.RawMessage, depth int) ([]normalizer, error) {
	c, ok, err := component(raw, depth)
	if err != nil || !ok {
		return nil, wrapComponent("normalizer", err)
	}
	switch c.Type {
	case "Sequence":
		var out []normalizer
		for _, r := range c.Normalizers {
			ns, err := parseNormalizer(r, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, ns...)
		}
		return out, nil
	case "Prepend":
		p := c.Prepend
		return []normalizer{func(s string) (string, error) {
			if s == "" {
				return s, nil
			}
			return p + s, nil
		}}, nil
	case "Replace":
		n, err := replaceNormalizer(c)
		return []normalizer{n}, wrapComponent("normalizer Replace", err)
	case "NFC", "NFD", "NFKC", "NFKD":
		// The Unicode normalization forms, as the tokenizers library's
		// normalizers of the same names apply them.
		f := unicodeForms[c.Type]
		return []normalizer{func(s string) (string, error) { return f.String(s), nil }}, nil
	case "Lowercase":
		return []normalizer{func(s string) (string, error) { return strings.ToLower(s), nil }}, nil
	case "Strip":
		l, r := c.Left, c.Right
		return []normalizer{func(s string) (string, error) {
			if l {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if r {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s, nil
		}}, nil
	}
	return nil, fmt.Errorf("%w: normalizer %q", ErrUnsupported, c.Type)
}

func replaceNormalizer(c hfComponent) (normalizer, error) {
	content := c.Content
	switch {
	case c.Pattern != nil && c.Pattern.String != nil:
		old := *c.Pattern.String
		return func(s string) (string, error) {
			if old == "" {
				return s, nil
			}
			return strings.ReplaceAll(s, old, content), nil
		}, nil
	case c.Pattern != nil && c.Pattern.Regex != nil:
		re, err := compileRegex(*c.Pattern.Regex)
		if err != nil {
			return nil, err
		}
		return func(s string) (string, error) {
			ms, err := matchRegex(re, s)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			last := 0
			for _, m := range ms {
				b.WriteString(s[last:m[0]])
				b.WriteString(content)
				last = m[1]
			}
			b.WriteString(s[last:])
			return b.String(), nil
		}, nil
	}
	return nil, fmt.Errorf("pattern must be String or Regex")
}

func parsePreTokenizer(raw json.RawMessage, depth int) ([]preTokenizer, error) {
	c, ok, err := component(raw, depth)
	if err != nil || !ok {
		return nil, wrapComponent("pre_tokenizer", err)
	}
	switch c.Type {
	case "Sequence":
		var out []preTokenizer
		for _, r := range c.Pretokenizers {
			ps, err := parsePreTokenizer(r, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
		return out, nil
	case "ByteLevel":
		return []preTokenizer{byteLevel(c)}, nil
	case "Metaspace":
		p, err := metaspace(c)
		return []preTokenizer{p}, wrapComponent("pre_tokenizer Metaspace", err)
	case "Split":
		p, err := splitPreTokenizer(c)
		return []preTokenizer{p}, wrapComponent("pre_tokenizer Split", err)
	case "Digits":
		return []preTokenizer{digits(c.IndividualDigits)}, nil
	case "WhitespaceSplit":
		return []preTokenizer{eachPiece(func(s string) ([]string, error) { return strings.Fields(s), nil })}, nil
	}
	return nil, fmt.Errorf("%w: pre_tokenizer %q", ErrUnsupported, c.Type)
}

// eachPiece lifts a function of one piece to a preTokenizer, dropping empty
// pieces as the Hugging Face library does.
func eachPiece(f func(string) ([]string, error)) preTokenizer {
	return func(pieces []string, _ bool) ([]string, error) {
		out := make([]string, 0, len(pieces))
		for _, p := range pieces {
			sub, err := f(p)
			if err != nil {
				return nil, err
			}
			for _, s := range sub {
				if s != "" {
					out = append(out, s)
				}
			}
		}
		return out, nil
	}
}

// gpt2Split is the regex ByteLevel applies when use_regex is set.
const gpt2Split = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

var gpt2Regex = func() *regexp2.Regexp {
	re, err := compileRegex(gpt2Split)
	if err != nil {
		panic(err) // a constant pattern; covered by tests
	}
	return re
}()

// byteToRune is GPT-2's reversible map from bytes to printable runes.
var byteToRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

func byteLevel(c hfComponent) preTokenizer {
	prefix := c.AddPrefixSpace != nil && *c.AddPrefixSpace
	useRegex := c.UseRegex == nil || *c.UseRegex
	return eachPiece(func(s string) ([]string, error) {
		if prefix && !strings.HasPrefix(s, " ") {
			s = " " + s
		}
		parts := []string{s}
		if useRegex {
			ms, err := matchRegex(gpt2Regex, s)
			if err != nil {
				return nil, err
			}
			parts = applyBehavior(s, ms, "Isolated", false)
		}
		for i, p := range parts {
			parts[i] = mapBytes(p)
		}
		return parts, nil
	})
}

func mapBytes(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteToRune[s[i]])
	}
	return b.String()
}

func metaspace(c hfComponent) (preTokenizer, error) {
	rep := "▁"
	if c.Replacement != nil {
		rep = *c.Replacement
	}
	if rep == "" {
		return nil, fmt.Errorf("empty replacement")
	}
	scheme := c.PrependScheme
	if scheme == "" {
		scheme = "always"
		if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
			scheme = "never"
		}
	}
	if scheme != "always" && scheme != "first" && scheme != "never" {
		return nil, fmt.Errorf("prepend_scheme %q", scheme)
	}
	split := c.Split == nil || *c.Split
	return func(pieces []string, atStart bool) ([]string, error) {
		var out []string
		for i, p := range pieces {
			if p == "" {
				continue
			}
			p = strings.ReplaceAll(p, " ", rep)
			first := atStart && i == 0
			if !strings.HasPrefix(p, rep) && (scheme == "always" || scheme == "first" && first) {
				p = rep + p
			}
			if !split {
				out = append(out, p)
				continue
			}
			out = append(out, applyBehavior(p, matchLiteral(rep, p), "MergedWithNext", false)...)
		}
		return out, nil
	}, nil
}

func splitPreTokenizer(c hfComponent) (preTokenizer, error) {
	behavior := c.Behavior
	switch behavior {
	case "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous":
	default:
		return nil, fmt.Errorf("behavior %q", behavior)
	}
	var find func(string) ([][2]int, error)
	switch {
	case c.Pattern != nil && c.Pattern.Regex != nil:
		re, err := compileRegex(*c.Pattern.Regex)
		if err != nil {
			return nil, err
		}
		find = func(s string) ([][2]int, error) { return matchRegex(re, s) }
	case c.Pattern != nil && c.Pattern.String != nil:
		lit := *c.Pattern.String
		find = func(s string) ([][2]int, error) { return matchLiteral(lit, s), nil }
	default:
		return nil, fmt.Errorf("pattern must be String or Regex")
	}
	invert := c.Invert
	return eachPiece(func(s string) ([]string, error) {
		ms, err := find(s)
		if err != nil {
			return nil, err
		}
		return applyBehavior(s, ms, behavior, invert), nil
	}), nil
}

func digits(individual bool) preTokenizer {
	behavior := "Contiguous"
	if individual {
		behavior = "Isolated"
	}
	return eachPiece(func(s string) ([]string, error) {
		var ms [][2]int
		for i, r := range s {
			if unicode.IsNumber(r) {
				ms = append(ms, [2]int{i, i + len(string(r))})
			}
		}
		return applyBehavior(s, ms, behavior, false), nil
	})
}

// matchRegex returns the byte ranges of re's non-empty matches in s.
func matchRegex(re *regexp2.Regexp, s string) ([][2]int, error) {
	idx, err := re.FindAllStringIndex(s, -1)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", re.String(), err)
	}
	out := make([][2]int, 0, len(idx))
	for _, m := range idx {
		if len(m) == 2 && m[0] < m[1] && m[0] >= 0 && m[1] <= len(s) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out, nil
}

func matchLiteral(lit, s string) [][2]int {
	if lit == "" {
		return nil
	}
	var out [][2]int
	for off := 0; ; {
		i := strings.Index(s[off:], lit)
		if i < 0 {
			return out
		}
		out = append(out, [2]int{off + i, off + i + len(lit)})
		off += i + len(lit)
	}
}

// span is a piece of a string and whether it matched the split pattern.
type span struct {
	start, end int
	match      bool
}

// applyBehavior splits s around the sorted, non-overlapping matches ms the
// way the Hugging Face library's SplitDelimiterBehavior does.
func applyBehavior(s string, ms [][2]int, behavior string, invert bool) []string {
	var spans []span
	prev := 0
	for _, m := range ms {
		if m[0] < prev {
			continue
		}
		if prev < m[0] {
			spans = append(spans, span{prev, m[0], invert})
		}
		spans = append(spans, span{m[0], m[1], !invert})
		prev = m[1]
	}
	if prev < len(s) {
		spans = append(spans, span{prev, len(s), invert})
	}
	spans = mergeSpans(spans, behavior)
	out := make([]string, 0, len(spans))
	for _, sp := range spans {
		if sp.start < sp.end {
			out = append(out, s[sp.start:sp.end])
		}
	}
	return out
}

func mergeSpans(spans []span, behavior string) []span {
	var out []span
	prevMatch := false
	switch behavior {
	case "Removed":
		for _, sp := range spans {
			if !sp.match {
				out = append(out, sp)
			}
		}
		return out
	case "MergedWithPrevious":
		for _, sp := range spans {
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, sp)
			}
			prevMatch = sp.match
		}
		return out
	case "MergedWithNext":
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = sp.start
			} else {
				out = append(out, sp)
			}
			prevMatch = sp.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	case "Contiguous":
		for i, sp := range spans {
			if i > 0 && sp.match == prevMatch {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, sp)
			}
			prevMatch = sp.match
		}
		return out
	}
	return spans // Isolated
}
