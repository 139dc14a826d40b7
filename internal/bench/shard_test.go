package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
)

func TestStartEvery(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	dur := func(d, warm time.Duration) load.Point {
		return load.Point{Load: record.Load{Concurrency: 1}, Duration: d, WarmupDuration: warm}
	}
	reqs := load.Point{Load: record.Load{Concurrency: 1}, Requests: 10}
	tests := []struct {
		name  string
		s     Setup
		scale float64
		want  time.Duration
		err   bool
	}{
		{"no marks", Setup{Points: []load.Point{reqs, reqs}}, 0, 0, false},
		{"one point needs no spacing", Setup{StartAt: at, Points: []load.Point{reqs}}, 0, 0, false},
		{"asked for", Setup{StartAt: at, StartEvery: time.Minute, Points: []load.Point{reqs, reqs}}, 0, time.Minute, false},
		// 30 s + 10 s warm-up + 10 s default grace, and a second to spare.
		{"durations", Setup{StartAt: at, Points: []load.Point{dur(20*time.Second, 0), dur(30*time.Second, 10*time.Second)}}, 0, 51 * time.Second, false},
		{"grace as set", Setup{StartAt: at, Grace: 2 * time.Second, Points: []load.Point{dur(20*time.Second, 0), dur(20*time.Second, 0)}}, 0, 23 * time.Second, false},
		// A target ten times faster than model time runs 60 s in 6 s.
		{"sped-up target", Setup{StartAt: at, Grace: time.Second, Points: []load.Point{dur(time.Minute, 0), dur(time.Minute, 0)}}, 10, 8 * time.Second, false},
		{"request counts", Setup{StartAt: at, Points: []load.Point{dur(time.Second, 0), reqs}}, 0, 0, true},
	}
	for _, tt := range tests {
		got, err := StartEvery(tt.s, tt.scale)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s: %v, %v; want %v, error %v", tt.name, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, ErrStartEvery) {
			t.Errorf("%s: %v is not ErrStartEvery", tt.name, err)
		}
	}
}

// TestShardSeed: worker 0 draws what one process would; the others draw
// streams of their own.
func TestShardSeed(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range 8 {
		s := shardSeed(42, load.Shard{Index: i, Count: 8})
		if seen[s] {
			t.Errorf("worker %d draws another worker's stream", i)
		}
		seen[s] = true
	}
	if shardSeed(42, load.Shard{}) != 42 || shardSeed(42, load.Shard{Index: 0, Count: 4}) != 42 {
		t.Error("worker 0 or an unsharded run does not draw from the run's seed")
	}
}
