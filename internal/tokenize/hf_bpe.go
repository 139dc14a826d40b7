package tokenize

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// bpe is a BPE model: a vocabulary and ranked merges of id pairs.
type bpe struct {
	vocab        map[string]int
	merges       map[[2]int]mergeTo
	unk          int // -1 when the model has no unknown token
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	byteIDs      [256]int // <0xXX> token ids, -1 where absent

	mu    sync.RWMutex
	cache map[string][]int
}

type mergeTo struct{ rank, id int }

// Short words repeat (" the"), long ones rarely; caching only short words
// keeps memory bounded when a pre-tokenizer leaves whole texts as one word.
const (
	cacheWordMax  = 64
	cacheEntryMax = 1 << 16
)

type hfModel struct {
	Type                    string          `json:"type"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	UnkToken                *string         `json:"unk_token"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	Dropout                 *float64        `json:"dropout"`
}

func newBPE(raw json.RawMessage) (*bpe, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("model: missing")
	}
	var head struct {
		Type   string          `json:"type"`
		Merges json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if head.Type == "" && len(head.Merges) > 0 {
		head.Type = "BPE" // older files leave the type implicit
	}
	if head.Type != "BPE" {
		return nil, fmt.Errorf("%w: model %q (only BPE is implemented)", ErrUnsupported, head.Type)
	}
	var m hfModel
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := checkBPEOptions(m); err != nil {
		return nil, err
	}
	b := &bpe{vocab: m.Vocab, unk: -1, fuseUnk: m.FuseUnk, byteFallback: m.ByteFallback,
		ignoreMerges: m.IgnoreMerges, cache: map[string][]int{}}
	if b.vocab == nil {
		b.vocab = map[string]int{}
	}
	if m.UnkToken != nil {
		if id, ok := b.vocab[*m.UnkToken]; ok {
			b.unk = id
		}
	}
	for i := range b.byteIDs {
		b.byteIDs[i] = -1
		if id, ok := b.vocab[fmt.Sprintf("<0x%02X>", i)]; ok {
			b.byteIDs[i] = id
		}
	}
	pairs, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	return b, b.addMerges(pairs)
}

func checkBPEOptions(m hfModel) error {
	switch {
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return fmt.Errorf("%w: model BPE continuing_subword_prefix", ErrUnsupported)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("%w: model BPE end_of_word_suffix", ErrUnsupported)
	case m.Dropout != nil && *m.Dropout > 0:
		return fmt.Errorf("%w: model BPE dropout (counts would be random)", ErrUnsupported)
	}
	return nil
}

// parseMerges reads either form of the merges list: ["a b", ...] or
// [["a", "b"], ...].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("model merges: %w", err)
	}
	out := make([][2]string, 0, len(items))
	for i, it := range items {
		var s string
		var pair []string
		switch {
		case json.Unmarshal(it, &s) == nil:
			pair = strings.Split(s, " ")
		case json.Unmarshal(it, &pair) == nil:
		default:
			return nil, fmt.Errorf("model merges[%d]: not a string or a pair", i)
		}
		if len(pair) != 2 {
			return nil, fmt.Errorf("model merges[%d]: want two parts, got %d", i, len(pair))
		}
		out = append(out, [2]string{pair[0], pair[1]})
	}
	return out, nil
}

func (b *bpe) addMerges(pairs [][2]string) error {
	b.merges = make(map[[2]int]mergeTo, len(pairs))
	for rank, p := range pairs {
		a, okA := b.vocab[p[0]]
		c, okC := b.vocab[p[1]]
		to, okTo := b.vocab[p[0]+p[1]]
		if !okA || !okC || !okTo {
			return fmt.Errorf("model merges[%d] %q %q: token not in vocab", rank, p[0], p[1])
		}
		if _, dup := b.merges[[2]int{a, c}]; !dup {
			b.merges[[2]int{a, c}] = mergeTo{rank: rank, id: to}
		}
	}
	return nil
}

// encodeWord appends the ids of one pre-tokenized piece to ids.
func (b *bpe) encodeWord(ids []int, word string) []int {
	if word == "" {
		return ids
	}
	if b.ignoreMerges {
		if id, ok := b.vocab[word]; ok {
			return append(ids, id)
		}
	}
	cacheable := len(word) <= cacheWordMax
	if cacheable {
		b.mu.RLock()
		got, ok := b.cache[word]
		b.mu.RUnlock()
		if ok {
			return append(ids, got...)
		}
	}
	out := b.merge(b.symbols(word))
	if cacheable {
		b.mu.Lock()
		if len(b.cache) < cacheEntryMax {
			b.cache[word] = out
		}
		b.mu.Unlock()
	}
	return append(ids, out...)
}

// symbols splits word into its initial symbols: one per character, bytes
// for characters outside the vocabulary (byte_fallback), or unk.
func (b *bpe) symbols(word string) []int {
	syms := make([]int, 0, len(word))
	lastUnk := false
	for _, r := range word {
		ch := string(r)
		if id, ok := b.vocab[ch]; ok {
			syms = append(syms, id)
			lastUnk = false
			continue
		}
		if b.byteFallback && b.appendBytes(&syms, ch) {
			lastUnk = false
			continue
		}
		if b.unk < 0 {
			continue // no unknown token: the character is dropped
		}
		if !(b.fuseUnk && lastUnk) {
			syms = append(syms, b.unk)
		}
		lastUnk = true
	}
	return syms
}

func (b *bpe) appendBytes(syms *[]int, ch string) bool {
	for i := 0; i < len(ch); i++ {
		if b.byteIDs[ch[i]] < 0 {
			return false
		}
	}
	for i := 0; i < len(ch); i++ {
		*syms = append(*syms, b.byteIDs[ch[i]])
	}
	return true
}

// merge applies merges lowest rank first, leftmost first among equal
// ranks, as the Hugging Face library does; O(n log n) in the word length.
func (b *bpe) merge(ids []int) []int {
	n := len(ids)
	if n < 2 {
		return ids
	}
	prev := make([]int, n)
	next := make([]int, n)
	alive := make([]bool, n)
	for i := range ids {
		prev[i], next[i], alive[i] = i-1, i+1, true
	}
	next[n-1] = -1
	q := &mergeQueue{}
	push := func(i int) {
		if i < 0 || next[i] < 0 {
			return
		}
		if m, ok := b.merges[[2]int{ids[i], ids[next[i]]}]; ok {
			heap.Push(q, pending{rank: m.rank, pos: i, id: m.id})
		}
	}
	for i := 0; i < n-1; i++ {
		push(i)
	}
	for q.Len() > 0 {
		top := heap.Pop(q).(pending)
		i := top.pos
		if !alive[i] || next[i] < 0 {
			continue
		}
		j := next[i]
		if m, ok := b.merges[[2]int{ids[i], ids[j]}]; !ok || m.id != top.id || m.rank != top.rank {
			continue // stale: a neighbour changed since this was queued
		}
		ids[i] = top.id
		alive[j] = false
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		push(prev[i])
		push(i)
	}
	out := make([]int, 0, n)
	for i := 0; i >= 0; i = next[i] {
		out = append(out, ids[i])
	}
	return out
}

type pending struct{ rank, pos, id int }

type mergeQueue []pending

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(pending)) }
func (q *mergeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
