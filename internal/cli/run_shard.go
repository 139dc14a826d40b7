package cli

import (
	"flag"
	"fmt"
	"time"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/load"
)

// shardFlags split a run across workers (docs/DISTRIBUTED.md).
type shardFlags struct {
	shard      load.Shard
	startAt    time.Time
	startEvery time.Duration
}

const (
	hintShard   = "servebench run --shard 0/4 ... (worker 0 of 4; docs/DISTRIBUTED.md)"
	hintStartAt = "servebench run --start-at 2026-12-01T09:00:00Z (RFC 3339, the same for every worker)"
)

func (f *shardFlags) define(fs *flag.FlagSet) {
	fs.Func("shard", "run worker I (from 0) of N, e.g. 0/4: its share of the users, or of the arrival schedule (docs/DISTRIBUTED.md)", func(v string) error {
		sh, err := load.ParseShard(v)
		f.shard = sh
		return err
	})
	fs.Func("start-at", "start the first load point at this wall-clock time (RFC 3339), so that every worker starts together", func(v string) error {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return fmt.Errorf("%q: want an RFC 3339 time such as 2026-12-01T09:00:00Z", v)
		}
		f.startAt = t
		return nil
	})
	fs.DurationVar(&f.startEvery, "start-every", 0, "with --start-at: time between the start marks of consecutive load points (default with --duration: warm-up + duration + --grace)")
}

// check refuses what a worker cannot do on its own, before any load.
func (f *shardFlags) check(r *runFlags) error {
	if f.startEvery < 0 {
		return usagef(hintStartAt+" --start-every 90s", "--start-every must not be negative")
	}
	if f.startEvery > 0 && f.startAt.IsZero() {
		return usagef(hintStartAt+" --start-every 90s", "--start-every spaces the marks of --start-at; give --start-at too")
	}
	if !f.shard.Whole() && r.slo.active() {
		return usagef("servebench report --objective NAME DIR0 DIR1 ... (judge the merged shards)",
			"--shard cannot be used with an objective or --slo: a worker sees only its share of the load; judge the merged run with report")
	}
	return nil
}

// checkPoints refuses a load point that cannot be split across the workers.
func (f *shardFlags) checkPoints(points []load.Point) error {
	for _, p := range points {
		if c := p.Load.MaxConcurrency; c > 0 && c < f.shard.Count {
			return usagef(hintShard, "--max-concurrency %d is split across %d workers: give each at least one (at least %d)", c, f.shard.Count, f.shard.Count)
		}
	}
	return nil
}

// setup copies the flags into a bench setup, and says on stderr when the
// start mark has passed already.
func (f *shardFlags) setup(env *Env, s *bench.Setup) {
	s.Shard, s.StartAt, s.StartEvery = f.shard, f.startAt, f.startEvery
	if late := time.Since(f.startAt); !f.startAt.IsZero() && late > 0 {
		fmt.Fprintf(env.Stderr, "warning: --start-at %s passed %v ago: the first load point starts now, late; run.json records by how much\n",
			f.startAt.UTC().Format(time.RFC3339), late.Round(time.Millisecond))
	}
}
