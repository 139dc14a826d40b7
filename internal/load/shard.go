package load

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is worker Index of Count (0 ≤ Index < Count) of a run whose load is
// split across several processes or machines (run --shard I/N). The zero
// value, like 0/1, is the whole load.
//
// The split is by index, dealt round-robin, so that the union of the
// shards is exactly the unsharded load: a closed loop's user j belongs to
// shard j mod Count, with its quota of the point's requests; an open loop's
// arrival k (of the one schedule every shard computes from the same seed)
// belongs to shard k mod Count.
type Shard struct{ Index, Count int }

// ParseShard reads "I/N": worker I (from 0) of N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: want I/N, worker I (counted from 0) of N, e.g. 0/4", s)
	}
	sh := Shard{Index: idx, Count: cnt}
	return sh, sh.Validate()
}

// Validate reports a shard that names no worker.
func (s Shard) Validate() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%s: want 0 ≤ I < N (worker I counted from 0 of N workers)", s)
	}
	return nil
}

// Whole reports whether s is the whole load (no sharding).
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Owns reports whether item k (a user, an arrival) dealt round-robin
// falls to this shard.
func (s Shard) Owns(k int) bool { return s.Whole() || k%s.Count == s.Index }

// Share is how many of n items dealt round-robin fall to this shard.
func (s Shard) Share(n int) int {
	if s.Whole() {
		return n
	}
	n = max(n, 0)
	share := n / s.Count
	if s.Index < n%s.Count {
		share++
	}
	return share
}

// quota is how many of n requests this shard's users send when the point's
// users each get an equal part of them, the first n mod users one more:
// the shard's users are j = Index, Index+Count, …, so it gets users × n/users
// plus one for each of its users below n mod users.
func (s Shard) quota(n, users int) int {
	if s.Whole() || users <= 0 {
		return n
	}
	return s.Share(users)*(n/users) + s.Share(n%users)
}

// Part is the part of p this shard runs, and false when it has none (a
// closed loop with fewer users than shards, or no requests left for its
// users). A closed loop's users and its request and warm-up counts are
// split by user; a duration bounds every shard alike. An open loop stays
// whole here: the dispatcher sends only the shard's own arrivals (Owns).
// A cap on requests in flight is split like users, so the shards together
// hold what one process would.
func (s Shard) Part(p Point) (Point, bool) {
	if s.Whole() {
		return p, true
	}
	p.Shard = s
	if p.Load.Rate > 0 {
		if p.Load.MaxConcurrency > 0 {
			p.Load.MaxConcurrency = s.Share(p.Load.MaxConcurrency)
			return p, p.Load.MaxConcurrency > 0
		}
		return p, true
	}
	users := p.Load.Concurrency
	p.Load.Concurrency = s.Share(users)
	p.Requests = s.quota(p.Requests, users)
	p.WarmupRequests = s.quota(p.WarmupRequests, users)
	ok := p.Load.Concurrency > 0 && (p.Requests > 0 || p.Duration > 0)
	return p, ok
}
