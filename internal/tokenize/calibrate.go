package tokenize

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strings"
)

// words.txt holds common English words, lower case, letters only: they
// tokenize the same wherever they stand in a prompt (each one is its own
// pre-token), which is what makes counts add up.
//
//go:embed words.txt
var wordsFile string

// openers start every prompt; a prompt's first word has no leading space,
// so it is measured on its own. Short and common: one token nearly anywhere.
var openers = []string{"The", "In", "We", "It", "This", "One", "When", "Many"}

// Calibration limits: words are measured in groups (one server call per
// group, split in halves when a group is off) so that a server needs tens of
// calls once, not one per word, and never more than maxCalibrationCounts.
const (
	calibrationGroup     = 32
	calibrationMinGroup  = 4
	maxCalibrationCounts = 160
	minSingleWords       = 16
	enoughSingleWords    = 320 // 320^16 different starts: no two prompts share a cache block
)

// piece is a run of text and how many tokens it adds to a prompt.
type piece struct {
	text string
	cost int
}

// calibration is what Synth learned about one counting mode: the totals of
// one-word prompts and the cost of each " word" that follows another word.
type calibration struct {
	count   func(context.Context, string) (int, error)
	base    int     // tokens in an empty prompt (special tokens, template)
	openers []piece // cost: total tokens of the opener alone as a prompt
	words   []piece // sorted by cost
	ones    []piece // the words of cost 1
	// padded holds each word's text (of at most padWidth bytes) zero-padded
	// to padWidth, for wordsText's fixed-size copy.
	padded [][padWidth]byte
}

func wordList() []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(wordsFile) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// calibrate measures openers and base with count; words come from wordsFrom
// when given (chat mode reuses the text mode's words), else are measured:
// one by one when counting is local and cheap, in groups on a server.
func calibrate(ctx context.Context, count func(context.Context, string) (int, error), local bool, wordsFrom *calibration) (*calibration, error) {
	c := &calibration{count: count}
	for _, o := range openers {
		n, err := count(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		c.openers = append(c.openers, piece{o, n})
	}
	c.base = c.openers[0].cost - 1
	if n, err := count(ctx, ""); err == nil {
		c.base = n // some servers refuse empty input; the estimate stands then
	}
	if wordsFrom != nil {
		c.words, c.ones, c.padded = wordsFrom.words, wordsFrom.ones, wordsFrom.padded
		return c, nil
	}
	var err error
	if local {
		c.words, err = measureEach(ctx, count, c.openers[0])
	} else {
		c.words, err = measureGroups(ctx, count, c.openers[0])
	}
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	sort.SliceStable(c.words, func(i, j int) bool { return c.words[i].cost < c.words[j].cost })
	for _, w := range c.words {
		if w.cost == 1 {
			c.ones = append(c.ones, w)
		}
	}
	if len(c.ones) < minSingleWords {
		return nil, fmt.Errorf("calibrate: only %d of %d common words are one token each under this tokenizer; cannot pad prompts exactly",
			len(c.ones), len(c.words))
	}
	c.padded = make([][padWidth]byte, len(c.words))
	for i, w := range c.words {
		copy(c.padded[i][:], w.text)
	}
	return c, nil
}

// measureEach costs every word by counting anchor+" word".
func measureEach(ctx context.Context, count func(context.Context, string) (int, error), anchor piece) ([]piece, error) {
	var out []piece
	for _, w := range wordList() {
		n, err := count(ctx, anchor.text+" "+w)
		if err != nil {
			return nil, err
		}
		if cost := n - anchor.cost; cost >= 1 {
			out = append(out, piece{" " + w, cost})
		}
	}
	return out, nil
}

// measureGroups finds the words that cost exactly one token by counting
// groups of them after the anchor: a group of k words that adds k tokens
// holds only one-token words (every word costs at least one). A group that
// adds a few more is halved, down to calibrationMinGroup; one that adds k/2
// or more is mostly long words and dropped. Words are grouped by length, so
// a small vocabulary's multi-token words fail together, cheaply.
func measureGroups(ctx context.Context, count func(context.Context, string) (int, error), anchor piece) ([]piece, error) {
	words := wordList()
	sort.SliceStable(words, func(i, j int) bool { return len(words[i]) < len(words[j]) })
	var queue [][]string
	for i := 0; i < len(words); i += calibrationGroup {
		queue = append(queue, words[i:min(i+calibrationGroup, len(words))])
	}
	var out []piece
	for calls := 0; len(queue) > 0 && calls < maxCalibrationCounts && len(out) < enoughSingleWords; calls++ {
		g := queue[0]
		queue = queue[1:]
		n, err := count(ctx, anchor.text+" "+strings.Join(g, " "))
		if err != nil {
			return nil, err
		}
		if n-anchor.cost == len(g) {
			for _, w := range g {
				out = append(out, piece{" " + w, 1})
			}
			continue
		}
		if excess := n - anchor.cost - len(g); 2*excess < len(g) && len(g) >= 2*calibrationMinGroup {
			queue = append(queue, g[:len(g)/2], g[len(g)/2:])
		}
	}
	return out, nil
}
