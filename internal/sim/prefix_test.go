package sim

import (
	"slices"
	"testing"
)

// ids are n token ids counting up from first.
func ids(first, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = first + i
	}
	return out
}

// TestBlockHashesChain: a block's hash covers its tokens and every token
// before it; a partial last block has none.
func TestBlockHashesChain(t *testing.T) {
	a := blockHashes(ids(0, 40), 16) // two full blocks, 8 tokens over
	if len(a) != 2 {
		t.Fatalf("%d hashes for 40 tokens in blocks of 16, want 2", len(a))
	}
	// The same first 32 tokens, then others: the same two hashes.
	if b := blockHashes(append(ids(0, 32), ids(900, 16)...), 16); !slices.Equal(b[:2], a) {
		t.Errorf("equal prefixes hash %x and %x", b[:2], a)
	}
	// Block 1's tokens the same, block 0's one token apart: block 1's
	// hash differs too (it is chained).
	other := ids(0, 32)
	other[3] = 7777
	c := blockHashes(other, 16)
	if c[0] == a[0] || c[1] == a[1] {
		t.Errorf("hashes %x after a change in block 0, want both unlike %x", c, a)
	}
	// Equal blocks at different positions hash apart.
	rep := append(ids(0, 16), ids(0, 16)...)
	if h := blockHashes(rep, 16); h[0] == h[1] {
		t.Error("a block repeated at another position has the same hash")
	}
}

// TestPrefixCacheLRU: a block nobody holds is evictable, least recently
// freed first; taking it back makes it not; refcounts count holders.
func TestPrefixCacheLRU(t *testing.T) {
	c := newPrefixCache()
	a, b, d := c.add(1), c.add(2), c.add(3)
	if c.add(2) != nil {
		t.Error("a hash cached twice")
	}
	c.take(b) // b held twice
	for _, x := range []*cachedBlock{d, a, b} {
		c.put(x)
	}
	if c.evictable != 2 || b.refs != 1 {
		t.Fatalf("evictable %d, b.refs %d; want 2 and 1 (b is still held)", c.evictable, b.refs)
	}
	if !c.put(b) || c.evictable != 3 {
		t.Fatalf("the last holder's put left %d evictable, want 3", c.evictable)
	}
	// Freed d, a, b in that order; a taken back and freed again is the
	// most recent.
	c.take(a)
	if c.evictable != 2 {
		t.Errorf("a taken back: evictable %d, want 2", c.evictable)
	}
	c.put(a)
	c.evict(2)
	if got := c.match([]uint64{1}, 1); len(got) != 1 || c.byHash[3] != nil || c.byHash[2] != nil {
		t.Errorf("evict(2) left %v; want d and b gone, a (freed last) kept", c.byHash)
	}
	if c.evictable != 1 {
		t.Errorf("evictable %d after evicting 2 of 3", c.evictable)
	}
	// match stops at the first miss and at the limit.
	c.add(10)
	if got := c.match([]uint64{1, 99, 10}, 3); len(got) != 1 {
		t.Errorf("match across a miss: %d blocks, want 1", len(got))
	}
	if got := c.match([]uint64{1}, 0); len(got) != 0 {
		t.Errorf("match with limit 0: %d blocks", len(got))
	}
}

// runEngine admits each prompt (its token ids) in turn once the one
// before has finished, generating 4 tokens each, and returns the seqs
// and the steps' prefix-cache counters summed.
func runEngine(t *testing.T, e *engine, prompts ...[]int) (out []*seq, queries, hits int) {
	t.Helper()
	for i, p := range prompts {
		s := &seq{id: uint64(i), prompt: len(p), target: 4, reason: reasonLength}
		if e.cache != nil {
			s.hashes = blockHashes(p, e.cfg.Engine.BlockSize)
		}
		e.add(s, e.now)
		for !e.idle() {
			st, ok := e.step()
			if !ok {
				t.Fatal("engine stalled")
			}
			queries, hits = queries+st.PrefixQueries, hits+st.PrefixHits
		}
		if s.err != nil || s.generated != 4 {
			t.Fatalf("prompt %d: %d tokens, %v", i, s.generated, s.err)
		}
		if e.freeBlocks != e.numBlocks {
			t.Fatalf("after prompt %d: %d of %d blocks free though nothing runs", i, e.freeBlocks, e.numBlocks)
		}
		out = append(out, s)
	}
	return out, queries, hits
}

// TestEngineSkipsCachedPrefill: a prompt whose leading blocks a finished
// request computed starts from them: its cached tokens are those blocks,
// its prefill is shorter, and the counters say so.
func TestEngineSkipsCachedPrefill(t *testing.T) {
	c := exact()
	c.Engine.EnablePrefixCaching = true
	e := newEngine(c)
	first := ids(0, 2000)
	shared := append(ids(0, 1024), ids(50000, 976)...) // 64 blocks shared
	ss, queries, hits := runEngine(t, e, first, shared, first)
	wantHits := 0
	// The first has nothing cached; the second its 64 shared blocks; the
	// third, equal to the first, all its full blocks short of the last
	// token: (2000−1)/16 = 124 blocks.
	for i, want := range []int{0, 1024, 124 * 16} {
		if ss[i].cached != want {
			t.Errorf("prompt %d: %d tokens cached, want %d", i, ss[i].cached, want)
		}
		wantHits += want
	}
	if queries != 3*2000 || hits != wantHits {
		t.Errorf("counters: %d queries, %d hits; want %d, %d", queries, hits, 3*2000, wantHits)
	}
	ttft := func(s *seq) float64 { return s.firstToken - s.arrival }
	if !(ttft(ss[1]) < ttft(ss[0]) && ttft(ss[2]) < ttft(ss[1])) {
		t.Errorf("TTFTs %v, %v, %v: want each shorter than the one before", ttft(ss[0]), ttft(ss[1]), ttft(ss[2]))
	}
	// Without the cache, the same prompts cache nothing and take as long
	// as the first.
	c.Engine.EnablePrefixCaching = false
	off, _, _ := runEngine(t, newEngine(c), first, shared)
	if off[1].cached != 0 || ttft(off[1]) != ttft(off[0]) {
		t.Errorf("cache off: %d cached, TTFT %v vs %v", off[1].cached, ttft(off[1]), ttft(off[0]))
	}
}

// TestEngineEvictsUnderPressure: cached blocks nobody holds give way to
// a new prompt when nothing else is free, least recently freed first.
func TestEngineEvictsUnderPressure(t *testing.T) {
	c := kvConfig(10, PreemptRecompute) // 160 tokens
	c.Engine.EnablePrefixCaching = true
	e := newEngine(c)
	a, b := ids(0, 65), ids(1000, 65) // 4 full blocks each, 5 with the output
	runEngine(t, e, a, b)
	if e.cache.evictable != 8 {
		t.Fatalf("%d blocks cached after two prompts, want 8", e.cache.evictable)
	}
	// A prompt of 65 tokens needs 5 blocks, 3 more than the 2 never
	// cached: 3 of a's, the least recently freed, tail first; b's stay.
	big := ids(5000, 4*16+1)
	ss, _, _ := runEngine(t, e, big, b, a)
	if ss[1].cached != 64 {
		t.Errorf("b after the eviction: %d cached, want 64 (its blocks were freed last)", ss[1].cached)
	}
	if ss[2].cached != 16 {
		t.Errorf("a after the eviction: %d cached, want 16 (its 3 tail blocks evicted, its head kept)", ss[2].cached)
	}
}

// TestCacheWithoutHitsChangesNothing: prompts that share no full block
// (random prompts, the default workload) run step for step as without the
// cache: the same batches, times and blocks; only the query counter moves.
func TestCacheWithoutHitsChangesNothing(t *testing.T) {
	run := func(cache bool) ([]Step, []float64) {
		c := exact()
		c.Engine.EnablePrefixCaching = cache
		e := newEngine(c)
		var seqs []*seq
		for i := range 12 {
			p := ids(10000*i, 300+97*i) // distinct tokens from the first
			s := &seq{id: uint64(i), prompt: len(p), target: 20 + i, reason: reasonLength}
			if cache {
				s.hashes = blockHashes(p, c.Engine.BlockSize)
			}
			e.add(s, float64(i)*0.01)
			seqs = append(seqs, s)
		}
		var steps []Step
		for !e.idle() {
			st, ok := e.step()
			if !ok {
				t.Fatal("engine stalled")
			}
			step := st.Step
			step.PrefixQueries, step.PrefixHits = 0, 0
			steps = append(steps, step)
		}
		var ttfts []float64
		for _, s := range seqs {
			if s.cached != 0 {
				t.Errorf("cache %v: seq %d found %d tokens cached", cache, s.id, s.cached)
			}
			ttfts = append(ttfts, s.firstToken-s.arrival, s.lastToken)
		}
		return steps, ttfts
	}
	offSteps, offTimes := run(false)
	onSteps, onTimes := run(true)
	if !slices.Equal(offSteps, onSteps) || !slices.Equal(offTimes, onTimes) {
		t.Errorf("the cache changed a run without hits: %d steps against %d", len(onSteps), len(offSteps))
	}
}

// TestSharedBlocksWhileRunning: a prompt admitted while another request
// holding its prefix still runs shares those blocks (held twice, counted
// once); they stay cached until both let go, and every block is free
// again at the end.
func TestSharedBlocksWhileRunning(t *testing.T) {
	c := exact()
	c.Engine.EnablePrefixCaching = true
	e := newEngine(c)
	prefix := ids(0, 640) // 40 blocks
	a := &seq{id: 1, prompt: 700, target: 50, reason: reasonLength, hashes: blockHashes(append(prefix, ids(9000, 60)...), 16)}
	b := &seq{id: 2, prompt: 700, target: 5, reason: reasonLength, hashes: blockHashes(append(prefix, ids(7000, 60)...), 16)}
	e.add(a, 0)
	for a.firstToken < 0 {
		e.step()
	}
	used := e.numBlocks - e.freeBlocks
	e.add(b, e.now)
	for b.scheduled < 0 {
		e.step()
	}
	if b.cached != 640 {
		t.Fatalf("b found %d tokens cached, want a's 640", b.cached)
	}
	// b holds a's 40 blocks without taking more memory for them: it added
	// only the blocks of its own 60 tokens (and a grew by at most one).
	if grew := e.numBlocks - e.freeBlocks - used; grew < 4 || grew > 5 {
		t.Errorf("b's admission took %d blocks, want 4 (+1 for a's growth)", grew)
	}
	if refs := e.cache.byHash[a.hashes[0]].refs; refs != 2 {
		t.Errorf("the first prefix block is held %d times, want 2", refs)
	}
	for !e.idle() {
		e.step()
	}
	if e.freeBlocks != e.numBlocks || e.cache.evictable != len(e.cache.byHash) {
		t.Errorf("at the end %d of %d blocks free, %d of %d cached blocks evictable", e.freeBlocks, e.numBlocks, e.cache.evictable, len(e.cache.byHash))
	}
}
