package bench

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/workload"
)

// feed prepares requests ahead of the load so that building a prompt (which
// may take a round trip to the server's tokenizer) never sits between a
// request's scheduled time and its send.
type feed struct {
	ch   chan workload.Item
	mu   sync.Mutex
	fail error
	// sessions is the source when it is multi-turn: later turns come
	// from it, not from the prepared items (see take). closed is true in
	// a closed loop.
	sessions workload.Sessions
	closed   bool
	// lineMu, stash and takes match a replayed trace's items to their
	// lines (byLine).
	lineMu sync.Mutex
	stash  map[int64]stashed
	takes  int64
}

// aheadTokens bounds the prompt text prepared before a point: about 64 MiB
// of text, enough for thousands of ordinary prompts or a few hundred
// long-context ones.
const aheadTokens = 16 << 20

// aheadFor sizes the prepared-request buffer of a point whose prompts
// average meanPromptTokens. When prompts are sized with the server's
// /tokenize (byServer) and a request count bounds the point, every prompt
// is prepared before the first send (within aheadTokens), so that sizing
// never adds requests to the server while it is being measured. Otherwise
// it is two rounds of virtual users, or two seconds of arrivals, at least
// 16, and the rest is prepared while the point runs: a run does not wait
// for thousands of prompts before its first request.
func aheadFor(meanPromptTokens float64, p load.Point, byServer bool) int {
	limit := max(16, int(aheadTokens/max(meanPromptTokens, 1)))
	if byServer && p.Requests > 0 && p.WarmupDuration == 0 {
		return min(p.Requests+p.WarmupRequests, limit)
	}
	n := 2 * p.Load.Concurrency
	if p.Load.Rate > 0 {
		n = int(2 * p.Load.Rate)
	}
	return min(max(n, 16), limit)
}

// prepare starts filling a feed from src and returns once the first ahead
// items (or all total of them, when fewer) are ready, or the source failed
// on the very first item — a workload that cannot produce one request is an
// error before any load is sent.
func prepare(ctx context.Context, src workload.Source, ahead, total int) (*feed, error) {
	ahead = max(ahead, 1)
	if total > 0 {
		ahead = min(ahead, total)
	}
	f := &feed{ch: make(chan workload.Item, ahead)}
	first, err := src.Next(ctx)
	if err != nil {
		return nil, err
	}
	f.ch <- first
	ready := make(chan struct{})
	go f.fill(ctx, src, total, ready)
	select {
	case <-ready:
	case <-ctx.Done():
	}
	return f, nil
}

// fill produces items until the source ends, total is reached, or ctx is
// cancelled; it closes ready once the buffer first fills.
func (f *feed) fill(ctx context.Context, src workload.Source, total int, ready chan struct{}) {
	defer close(f.ch)
	signalled := false
	signal := func() {
		if !signalled {
			close(ready)
			signalled = true
		}
	}
	defer signal()
	for n := 1; total == 0 || n < total; n++ {
		if len(f.ch) == cap(f.ch) {
			signal()
		}
		it, err := src.Next(ctx)
		if err != nil {
			// io.EOF: a source that ends (a trace's window) has given all
			if ctx.Err() == nil && !errors.Is(err, io.EOF) {
				f.mu.Lock()
				f.fail = err
				f.mu.Unlock()
			}
			return
		}
		select {
		case f.ch <- it:
		case <-ctx.Done():
			return
		}
	}
}

// next returns the next item, or false when the feed is exhausted or ctx
// is done.
func (f *feed) next(ctx context.Context) (workload.Item, bool) {
	select {
	case it, ok := <-f.ch:
		return it, ok
	case <-ctx.Done():
		return workload.Item{}, false
	}
}

// err returns the source's failure, if it failed.
func (f *feed) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail
}

func (f *feed) reason() string {
	if err := f.err(); err != nil {
		return err.Error()
	}
	return errors.New("the workload ran out of requests").Error()
}
