package load

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/4", Shard{0, 4}, true},     // the first of four
		{"3/4", Shard{3, 4}, true},     // the last of four
		{" 1 / 2 ", Shard{1, 2}, true}, // spaces as a shell script may leave them
		{"0/1", Shard{0, 1}, true},     // one worker: the whole load
		{"4/4", Shard{}, false},        // counted from 0
		{"-1/4", Shard{}, false},       // negative
		{"1/0", Shard{}, false},        // no workers
		{"1", Shard{}, false},          // no count
		{"a/b", Shard{}, false},        // not numbers
		{"", Shard{}, false},           // empty
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "1/0", "x", "9/10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("ParseShard(%q) = %v: accepted a worker out of range", s, sh)
		}
		if back, err := ParseShard(sh.String()); err != nil || back != sh {
			t.Fatalf("%v does not read back: %v, %v", sh, back, err)
		}
	})
}

// TestShardPartClosed: a closed loop's users and request counts split by
// user, their sums over the shards the whole point's.
func TestShardPartClosed(t *testing.T) {
	tests := []struct {
		name                  string
		users, requests, warm int
		dur                   time.Duration
		shards                int
		wantUsers, wantReqs   []int
		wantOK                []bool
	}{
		{"c=1 on four workers: one runs it, three idle", 1, 100, 0, 0, 4,
			[]int{1, 0, 0, 0}, []int{100, 0, 0, 0}, []bool{true, false, false, false}},
		{"c=6 on four: users 2,2,1,1; 100 requests as 16 or 17 per user", 6, 100, 0, 0, 4,
			[]int{2, 2, 1, 1}, []int{33, 33, 17, 17}, []bool{true, true, true, true}},
		{"c=4 on four, 10 requests: the first two users send one more", 4, 10, 0, 0, 4,
			[]int{1, 1, 1, 1}, []int{3, 3, 2, 2}, []bool{true, true, true, true}},
		{"c=8 on three, 4 requests: a shard whose users have none idles", 8, 4, 0, 0, 3,
			[]int{3, 3, 2}, []int{2, 1, 1}, []bool{true, true, true}},
		{"c=8 on three, 2 requests", 8, 2, 0, 0, 3,
			[]int{3, 3, 2}, []int{1, 1, 0}, []bool{true, true, false}},
		{"duration only: every shard runs it", 3, 0, 0, time.Second, 2,
			[]int{2, 1}, []int{0, 0}, []bool{true, true}},
		{"one worker: the whole point", 5, 7, 0, 0, 1,
			[]int{5}, []int{7}, []bool{true}},
	}
	for _, tt := range tests {
		p := Point{Load: record.Load{Concurrency: tt.users}, Requests: tt.requests, Duration: tt.dur}
		var users, reqs int
		for i := range tt.shards {
			got, ok := Shard{i, tt.shards}.Part(p)
			if got.Load.Concurrency != tt.wantUsers[i] || got.Requests != tt.wantReqs[i] || ok != tt.wantOK[i] {
				t.Errorf("%s: shard %d: users %d, requests %d, ok %v; want %d, %d, %v", tt.name, i,
					got.Load.Concurrency, got.Requests, ok, tt.wantUsers[i], tt.wantReqs[i], tt.wantOK[i])
			}
			users, reqs = users+got.Load.Concurrency, reqs+got.Requests
		}
		if users != tt.users || reqs != tt.requests {
			t.Errorf("%s: shards sum to %d users, %d requests; want %d, %d", tt.name, users, reqs, tt.users, tt.requests)
		}
	}
}

// TestShardPartWarmupAndCap: warm-up requests and an open loop's cap on
// requests in flight split as users do; a cap smaller than the worker
// count leaves some shards nothing to send.
func TestShardPartWarmupAndCap(t *testing.T) {
	warm := 0
	for i := range 3 {
		got, _ := Shard{i, 3}.Part(Point{Load: record.Load{Concurrency: 4}, Requests: 40, WarmupRequests: 5})
		warm += got.WarmupRequests
	}
	if warm != 5 {
		t.Errorf("warm-up requests sum to %d over the shards, want 5", warm)
	}
	open := Point{Load: record.Load{Rate: 10, MaxConcurrency: 5}, Requests: 10}
	var caps []int
	var oks []bool
	for i := range 4 {
		got, ok := Shard{i, 4}.Part(open)
		caps, oks = append(caps, got.Load.MaxConcurrency), append(oks, ok)
	}
	if !slices.Equal(caps, []int{2, 1, 1, 1}) || !slices.Equal(oks, []bool{true, true, true, true}) {
		t.Errorf("cap 5 on four workers: %v %v, want [2 1 1 1], all running", caps, oks)
	}
	if _, ok := (Shard{3, 4}).Part(Point{Load: record.Load{Rate: 10, MaxConcurrency: 3}, Requests: 10}); ok {
		t.Error("cap 3 on four workers: the fourth runs, with no place for a request")
	}
}

// TestShardArrivalsUnion: the arrivals the shards send, taken together,
// are exactly those of one process: the same indexes, offsets and phases,
// whatever the arrival process, the bound and the warm-up.
func TestShardArrivalsUnion(t *testing.T) {
	points := []struct {
		name string
		p    Point
	}{
		{"poisson, request count", Point{Load: record.Load{Rate: 50}, Requests: 101, Seed: 7}},
		{"gamma, warm-up requests", Point{Load: record.Load{Rate: 50}, Requests: 60, WarmupRequests: 7, Seed: 3,
			Arrival: Arrival{Process: ArrivalGamma, Shape: 0.5}}},
		{"constant, duration and warm-up time", Point{Load: record.Load{Rate: 33}, Duration: 2 * time.Second,
			WarmupDuration: 500 * time.Millisecond, Arrival: Arrival{Process: ArrivalConstant}}},
		{"poisson, both bounds", Point{Load: record.Load{Rate: 200}, Requests: 150, Duration: time.Second, Seed: 9}},
	}
	for _, pt := range points {
		sched, err := pt.p.Arrival.Schedule(pt.p.Load.Rate, scheduleLength(pt.p), pt.p.Seed)
		if err != nil {
			t.Fatal(err)
		}
		whole := arrivals(pt.p, sched)
		for _, n := range []int{1, 2, 3, 4, 7} {
			var union []arrival
			for i := range n {
				part, _ := Shard{i, n}.Part(pt.p)
				union = append(union, arrivals(part, sched)...)
			}
			slices.SortFunc(union, func(a, b arrival) int { return a.k - b.k })
			if !slices.Equal(union, whole) {
				t.Errorf("%s on %d workers: the union of the shards' %d arrivals differs from one process's %d",
					pt.name, n, len(union), len(whole))
			}
		}
	}
}

// TestShardOpenLoopRunner: four runners, each sending its shard of one
// open-loop point, send the point's requests between them, each once.
func TestShardOpenLoopRunner(t *testing.T) {
	p := Point{Load: record.Load{Rate: 1000}, Requests: 200, WarmupRequests: 10, Seed: 5}
	var measured, warm, sent int
	for i := range 4 {
		epoch := time.Now()
		srv := &fakeServer{epoch: epoch, latency: time.Millisecond}
		s := &sink{}
		r := &Runner{Epoch: epoch, Send: srv.send, Emit: s.emit}
		part, _ := Shard{i, 4}.Part(p)
		c, err := r.Run(context.Background(), part)
		if err != nil {
			t.Fatal(err)
		}
		measured, warm, sent = measured+s.count(record.PhaseMeasured), warm+s.count(record.PhaseWarmup), sent+c.Sent
	}
	if measured != 200 || warm != 10 || sent != 210 {
		t.Errorf("four shards: %d measured, %d warm-up, %d sent; want 200, 10, 210", measured, warm, sent)
	}
}
