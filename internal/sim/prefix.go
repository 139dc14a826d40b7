package sim

import "encoding/binary"

// prefixCache is the engine's automatic prefix cache, as vLLM v1 keeps
// it: each full block of prompt tokens is known by a hash chained over
// its tokens and every block before it, so that equal hashes mean an equal
// prefix. A block stays in the cache after its last sequence lets go of
// it, counted as free: a later prompt with the same prefix takes it back
// instead of computing it again, and allocation evicts such blocks, least
// recently freed first, only when no never-cached block is left.
type prefixCache struct {
	byHash map[uint64]*cachedBlock
	// lru holds the blocks no sequence references, least recently freed
	// first; lru itself is the list's sentinel.
	lru       cachedBlock
	evictable int
}

// cachedBlock is one block of the cache: its hash, the sequences holding
// it, and its place in the LRU list while refs is 0.
type cachedBlock struct {
	hash       uint64
	refs       int
	prev, next *cachedBlock
}

func newPrefixCache() *prefixCache {
	c := &prefixCache{byHash: map[uint64]*cachedBlock{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// blockHashes are the chained hashes of the full blocks of ids: block i's
// hash covers its bs tokens and, through block i−1's, everything before.
// A last partial block has none (vLLM caches full blocks only).
func blockHashes(ids []int, bs int) []uint64 {
	if bs <= 0 {
		return nil
	}
	out := make([]uint64, 0, len(ids)/bs)
	var parent uint64
	var buf [8]byte
	for i := 0; i+bs <= len(ids); i += bs {
		h := fnvOffset
		binary.LittleEndian.PutUint64(buf[:], parent)
		h = fnvBytes(h, buf[:])
		for _, id := range ids[i : i+bs] {
			binary.LittleEndian.PutUint32(buf[:4], uint32(id))
			h = fnvBytes(h, buf[:4])
		}
		out = append(out, h)
		parent = h
	}
	return out
}

const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// fnvBytes is FNV-1a over b, from h.
func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// match returns the cached blocks of the longest prefix of hashes, at
// most limit of them.
func (c *prefixCache) match(hashes []uint64, limit int) []*cachedBlock {
	var out []*cachedBlock
	for _, h := range hashes[:min(limit, len(hashes))] {
		b := c.byHash[h]
		if b == nil {
			break
		}
		out = append(out, b)
	}
	return out
}

// take references b; a block nobody held leaves the LRU list (the
// caller takes it from the free count).
func (c *prefixCache) take(b *cachedBlock) {
	if b.refs == 0 {
		b.prev.next, b.next.prev = b.next, b.prev
		b.prev, b.next = nil, nil
		c.evictable--
	}
	b.refs++
}

// put lets go of b; the last reference puts it at the LRU list's most
// recent end, and reports true (the block is free again).
func (c *prefixCache) put(b *cachedBlock) bool {
	b.refs--
	if b.refs > 0 {
		return false
	}
	last := c.lru.prev
	b.prev, b.next = last, &c.lru
	last.next, c.lru.prev = b, b
	c.evictable++
	return true
}

// add caches a block just computed under hash h, held by its sequence;
// nil when a block with that hash is cached already (two sequences that
// computed the same prefix at once: the second keeps its own copy).
func (c *prefixCache) add(h uint64) *cachedBlock {
	if c.byHash[h] != nil {
		return nil
	}
	b := &cachedBlock{hash: h, refs: 1}
	c.byHash[h] = b
	return b
}

// evict forgets the n least recently freed unreferenced blocks, so that
// their memory can hold new tokens.
func (c *prefixCache) evict(n int) {
	for ; n > 0 && c.evictable > 0; n-- {
		b := c.lru.next
		b.prev.next, b.next.prev = b.next, b.prev
		b.prev, b.next = nil, nil
		delete(c.byHash, b.hash)
		c.evictable--
	}
}
