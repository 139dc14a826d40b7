package sim

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/servebench/servebench/internal/perfmodel"
)

// ErrKVCacheFull fails a sequence evicted under PreemptReject. Its text
// mentions the KV cache as real servers' out-of-memory errors do.
var ErrKVCacheFull = errors.New("KV cache is full and preemption is disabled (engine.preemption: reject): request aborted, out of KV cache memory")

type seqState uint8

const (
	stWaiting seqState = iota
	stRunning
	stDone
)

// seq is one request inside the engine. The engine alone touches it, except
// the fields set before submission (id, prompt, target, box).
type seq struct {
	id     uint64
	prompt int    // prompt tokens
	target int    // tokens to generate
	reason string // finish reason on reaching target: "stop" or "length"
	box    *mailbox

	generated int // tokens sampled so far
	computed  int // tokens whose KV is in the cache
	blocks    int // KV blocks held
	state     seqState

	// Model-time stamps in seconds; scheduled and firstToken are < 0 until
	// set. ready is arrival plus the request overhead: when the request
	// reaches the scheduler.
	arrival, ready, scheduled, firstToken, prevToken, lastToken float64
	preemptions                                                 int
	err                                                         error
	// granted: it holds a slot while in its overhead (slotFirst).
	granted bool

	// The prefix cache (prefix.go): the chained hashes of the prompt's
	// full blocks; the blocks of its table the cache holds (hits, then
	// blocks it computed and cached); the prompt blocks looked at for
	// caching so far; and the prompt tokens found cached when it was
	// first scheduled, which its usage reports.
	hashes     []uint64
	cblocks    []*cachedBlock
	registered int
	cached     int
}

// known is the number of tokens whose ids exist: prompt + generated.
func (s *seq) known() int { return s.prompt + s.generated }

// engine is a vLLM-v1-style scheduler over a virtual clock: one call to step
// schedules, costs and completes one engine step. It has no goroutines and
// no wall clock, so it is deterministic and testable on its own.
type engine struct {
	cfg        Config
	perf       perfmodel.StepTimer
	now        float64 // model time, seconds
	waiting    []*seq  // FIFO; preempted sequences return to the front
	running    []*seq  // in admission order
	freeBlocks int
	numBlocks  int
	rng        *rand.Rand
	steps      int
	// cache is the prefix cache, nil when engine.enable_prefix_caching
	// is off.
	cache *prefixCache
	// wander is the engine's slow change of speed (Config.Wander): its own
	// random stream, so that a wander leaves every other draw as it was.
	wander wander
	// Slot-first admission (slots.go): waiting requests holding a slot,
	// and when each free slot freed.
	granted int
	freedAt []float64

	sched []scheduled // reused between steps
	out   stepOut
}

type scheduled struct {
	s *seq
	n int // tokens computed for s in this step
}

// stepOut is what one step did; its slices are reused by the next step.
type stepOut struct {
	Step
	dur      float64 // the step's duration in seconds
	produced []*seq  // sampled one token in this step
	finished []*seq  // finished in this step (subset of produced)
	failed   []*seq  // evicted with ErrKVCacheFull in this step
}

// Step is one engine step, in model time.
type Step struct {
	Index    int
	Start    time.Duration
	Duration time.Duration
	Seqs     int // sequences scheduled
	Decode   int // sequences decoding one token
	Prefill  int // prefill tokens (including recomputation)
	// After the step:
	Running, Waiting, KVBlocksUsed int
	Preempted, Rejected            int
	// PrefixQueries and PrefixHits are the tokens of the sequences
	// admitted in the step and those of them found in the prefix cache
	// (vLLM's prefix_cache_queries and prefix_cache_hits).
	PrefixQueries, PrefixHits int
}

func newEngine(cfg Config) *engine {
	n := cfg.kvBlocks()
	e := &engine{cfg: cfg, perf: cfg.Perf(), freeBlocks: n, numBlocks: n,
		rng:    rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed5eed)),
		wander: wander{sd: cfg.Wander, tau: cfg.WanderTime, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x3a4de4))}}
	if cfg.Engine.EnablePrefixCaching {
		e.cache = newPrefixCache()
	}
	return e
}

func (e *engine) idle() bool { return len(e.waiting) == 0 && len(e.running) == 0 }

// queued is the number of waiting sequences the scheduler can see: those
// through their request overhead. A request still in its overhead is in
// the API server (template, tokenization), which vLLM's waiting gauge
// does not count either.
func (e *engine) queued() int {
	n := 0
	for _, s := range e.waiting {
		if s.ready <= e.now || (e.slotFirst() && !s.granted) {
			n++
		}
	}
	return n
}

// add queues s, which arrived at model time arrival (≤ e.now); the
// scheduler sees it once the request overhead (API server, template,
// tokenization) has passed.
func (e *engine) add(s *seq, arrival float64) {
	s.arrival, s.scheduled, s.firstToken, s.state = arrival, -1, -1, stWaiting
	s.ready = arrival + e.perf.RequestTime()
	if e.slotFirst() {
		s.ready = math.Inf(1) // set when it is granted a slot
	}
	e.waiting = append(e.waiting, s)
}

// abort removes s wherever it is and frees its KV cache.
func (e *engine) abort(s *seq) {
	switch s.state {
	case stWaiting:
		e.waiting = remove(e.waiting, s)
		if s.granted {
			e.unqueued(s)
			e.release()
		}
	case stRunning:
		e.running = remove(e.running, s)
		e.release()
	default:
		return
	}
	e.free(s)
	s.state = stDone
}

func remove(list []*seq, s *seq) []*seq {
	for i, x := range list {
		if x == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// alloc gives s the blocks to hold n more tokens, or reports false.
// Cached blocks no sequence holds count as free: they are evicted, least
// recently freed first, once no never-cached free block is left.
func (e *engine) alloc(s *seq, n int) bool {
	bs := e.cfg.Engine.BlockSize
	need := (s.computed+n+bs-1)/bs - s.blocks
	if need > e.freeBlocks {
		return false
	}
	if need > 0 {
		if e.cache != nil {
			e.cache.evict(need - (e.freeBlocks - e.cache.evictable))
		}
		e.freeBlocks -= need
		s.blocks += need
	}
	return true
}

// free lets go of s's blocks: its own return to the free count, and a
// cached one when s was its last holder (it stays cached until evicted).
// The last block goes first, so that eviction takes a prefix's tail
// before its head, as vLLM does.
func (e *engine) free(s *seq) {
	e.freeBlocks += s.blocks - len(s.cblocks)
	for i := len(s.cblocks) - 1; i >= 0; i-- {
		if e.cache.put(s.cblocks[i]) {
			e.freeBlocks++
		}
	}
	clear(s.cblocks)
	s.cblocks, s.blocks, s.registered = s.cblocks[:0], 0, 0
}

// evict frees the most recently admitted running sequence: back to the
// front of the queue for recomputation, or failed under PreemptReject.
func (e *engine) evict() *seq {
	v := e.running[len(e.running)-1]
	e.running = e.running[:len(e.running)-1]
	e.free(v)
	if e.cfg.Engine.Preemption == PreemptReject {
		v.state, v.err = stDone, ErrKVCacheFull
		e.release()
		e.out.failed = append(e.out.failed, v)
		e.out.Rejected++
		return v
	}
	v.state, v.computed = stWaiting, 0
	if e.slotFirst() {
		v.granted, v.ready = true, e.now // it keeps its slot, through its overhead
		e.granted++
	}
	v.preemptions++
	e.waiting = append([]*seq{v}, e.waiting...)
	e.out.Preempted++
	return v
}

// step runs one engine step, advancing e.now by its duration. It reports
// false, doing nothing, when nothing can be scheduled.
func (e *engine) step() (*stepOut, bool) {
	e.out = stepOut{produced: e.out.produced[:0], finished: e.out.finished[:0], failed: e.out.failed[:0]}
	e.sched = e.sched[:0]
	e.grant()
	budget := e.scheduleRunning(e.cfg.Engine.MaxNumBatchedTokens)
	if e.out.Preempted == 0 && e.out.Rejected == 0 {
		e.admitWaiting(budget)
	}
	if len(e.sched) == 0 && e.out.Preempted > 0 {
		e.admitWaiting(e.cfg.Engine.MaxNumBatchedTokens) // it preempted itself
	}
	if len(e.sched) == 0 && len(e.running) == 0 && len(e.waiting) > 0 && e.waiting[0].ready > e.now &&
		!math.IsInf(e.waiting[0].ready, 1) {
		e.now = e.waiting[0].ready // idle until the next request is through its overhead
		e.admitWaiting(e.cfg.Engine.MaxNumBatchedTokens)
	}
	if len(e.sched) == 0 {
		e.failStuck()
		return &e.out, len(e.out.failed) > 0
	}
	e.out.Index, e.out.Start = e.steps, seconds(e.now)
	e.steps++
	e.out.dur = e.cost()
	e.out.Duration = seconds(e.out.dur)
	e.now += e.out.dur
	e.complete()
	e.out.Running, e.out.Waiting = len(e.running), len(e.waiting)
	e.out.KVBlocksUsed = e.numBlocks - e.freeBlocks
	return &e.out, true
}

// scheduleRunning gives each running sequence, oldest first, its next
// tokens (1 when decoding, up to the budget when prefilling), evicting the
// newest when the KV cache is full. It returns the budget left.
func (e *engine) scheduleRunning(budget int) int {
	for i := 0; i < len(e.running) && budget > 0; i++ {
		s := e.running[i]
		n := min(s.known()-s.computed, budget)
		for !e.alloc(s, n) {
			if e.evict() == s {
				return budget
			}
		}
		e.sched = append(e.sched, scheduled{s, n})
		budget -= n
	}
	return budget
}

// admitWaiting admits queued sequences in order while slots, budget and
// KV blocks allow; a partial prompt is admitted as a prefill chunk.
func (e *engine) admitWaiting(budget int) {
	for len(e.waiting) > 0 && budget > 0 {
		s := e.waiting[0]
		if !e.hasSlot(s) || s.ready > e.now {
			return
		}
		hit := e.prefixHits(s)
		n := min(s.known()-s.computed-len(hit)*e.cfg.Engine.BlockSize, budget)
		if !e.fits(s, hit, n) {
			return
		}
		e.takeHits(s, hit)
		e.alloc(s, n)
		e.waiting = e.waiting[1:]
		e.unqueued(s)
		s.state = stRunning
		if s.scheduled < 0 {
			s.scheduled = e.now
			s.cached = s.computed
		}
		e.running = append(e.running, s)
		e.sched = append(e.sched, scheduled{s, n})
		budget -= n
	}
}

// failStuck fails the head of the queue when nothing at all can run: only
// reachable if a request is larger than the whole KV cache.
func (e *engine) failStuck() {
	if len(e.running) == 0 && len(e.waiting) > 0 {
		s := e.waiting[0]
		e.waiting = e.waiting[1:]
		if s.granted {
			e.unqueued(s)
			e.release()
		}
		s.state, s.err = stDone, ErrKVCacheFull
		e.out.failed = append(e.out.failed, s)
		e.out.Rejected++
	}
}

// cost is the step's duration from the step-time model, with jitter.
func (e *engine) cost() float64 {
	var b Batch
	for _, x := range e.sched {
		decode := x.s.generated > 0 && x.n == 1 && x.s.computed == x.s.known()-1
		b.Add(e.perf.Chunk(int64(x.s.computed), int64(x.n), decode))
		if decode {
			e.out.Decode++
		} else {
			e.out.Prefill += x.n
		}
	}
	e.out.Seqs = len(e.sched)
	d := e.perf.StepTime(b)
	if j := e.cfg.Jitter; j > 0 {
		d *= 1 + j*(2*e.rng.Float64()-1)
	}
	return d / e.wander.speed(e.now)
}

// minWander is the slowest a wander makes the engine: a third of its
// speed, four standard deviations down at the largest Wander.
const minWander = 0.3

// wander is the state of Config.Wander: X, an Ornstein-Uhlenbeck process
// of unit variance and correlation time tau, last moved at model time at.
type wander struct {
	sd, tau float64
	rng     *rand.Rand
	x, at   float64
	started bool
}

// speed is the engine's speed at model time now relative to its model,
// 1 + sd·X(now), X moved by its exact transition from its last time: X
// starts at a draw from its stationary law.
func (w *wander) speed(now float64) float64 {
	if w.sd == 0 {
		return 1
	}
	if !w.started {
		w.x, w.started = w.rng.NormFloat64(), true
	} else if dt := now - w.at; dt > 0 {
		a := math.Exp(-dt / w.tau)
		w.x = a*w.x + math.Sqrt(1-a*a)*w.rng.NormFloat64()
	}
	w.at = now
	return math.Max(minWander, 1+w.sd*w.x)
}

// complete applies the step: a sequence whose cache has caught up with its
// known tokens samples one token; one that reaches its target finishes.
func (e *engine) complete() {
	done := false
	for _, x := range e.sched {
		s := x.s
		s.computed += x.n
		e.cacheComputed(s)
		if s.computed != s.known() {
			continue // a prefill chunk that is not the last
		}
		s.generated++
		s.prevToken, s.lastToken = s.lastToken, e.now
		if s.firstToken < 0 {
			s.firstToken, s.prevToken = e.now, e.now
		}
		e.out.produced = append(e.out.produced, s)
		if s.generated >= s.target {
			s.state = stDone
			e.free(s)
			e.release()
			e.out.finished = append(e.out.finished, s)
			done = true
		}
	}
	if done {
		kept := e.running[:0]
		for _, s := range e.running {
			if s.state == stRunning {
				kept = append(kept, s)
			}
		}
		clear(e.running[len(kept):])
		e.running = kept
	}
}

// prefixHits are the cached blocks s can start from when it is admitted
// with nothing computed: the longest cached prefix of its prompt's full
// blocks, short of its last token, which is always computed (vLLM needs
// its logits).
func (e *engine) prefixHits(s *seq) []*cachedBlock {
	if e.cache == nil || s.computed > 0 || len(s.hashes) == 0 {
		return nil
	}
	return e.cache.match(s.hashes, (s.known()-1)/e.cfg.Engine.BlockSize)
}

// fits reports whether s, starting from the cached blocks hit, has the
// free blocks for n more tokens (alloc's test): those hit that nobody
// holds leave the free count too.
func (e *engine) fits(s *seq, hit []*cachedBlock, n int) bool {
	bs := e.cfg.Engine.BlockSize
	need := (s.computed+len(hit)*bs+n+bs-1)/bs - s.blocks - len(hit)
	for _, b := range hit {
		if b.refs == 0 {
			need++
		}
	}
	return need <= e.freeBlocks
}

// takeHits starts s from the cached blocks hit: they are its first
// blocks and their tokens are computed. The step's prefix-cache counters
// count s's tokens and those found.
func (e *engine) takeHits(s *seq, hit []*cachedBlock) {
	if e.cache == nil {
		return
	}
	for _, b := range hit {
		if b.refs == 0 {
			e.freeBlocks--
		}
		e.cache.take(b)
	}
	s.cblocks = append(s.cblocks, hit...)
	s.blocks, s.registered = len(hit), len(hit)
	s.computed = len(hit) * e.cfg.Engine.BlockSize
	e.out.PrefixQueries += s.known()
	e.out.PrefixHits += s.computed
}

// cacheComputed caches the prompt blocks s has now computed in full.
func (e *engine) cacheComputed(s *seq) {
	if e.cache == nil {
		return
	}
	bs := e.cfg.Engine.BlockSize
	for s.registered < len(s.hashes) && (s.registered+1)*bs <= s.computed {
		if b := e.cache.add(s.hashes[s.registered]); b != nil {
			s.cblocks = append(s.cblocks, b)
		}
		s.registered++
	}
}
