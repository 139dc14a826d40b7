package cli

import (
	"errors"
	"flag"
	"time"

	"github.com/servebench/servebench/internal/bench"
)

// sliceFlag is --slice: a positive duration, and whether it was given
// (sustained runs: bench.SliceLength).
type sliceFlag struct {
	d   time.Duration
	set bool
}

func (f *sliceFlag) String() string {
	if !f.set {
		return ""
	}
	return f.d.String()
}

func (f *sliceFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return errors.New("want a positive duration, e.g. 1m")
	}
	f.d, f.set = d, true
	return nil
}

func (f *sliceFlag) define(fs *flag.FlagSet) {
	fs.Var(f, "slice", "cut each load point into slices of this much (model) time and check them for drift, e.g. 1m (default 1m when --duration is 10m or more)")
}

// resolve is the slice length a run with --duration dur uses
// (bench.SliceLength), its error in the terms of the flags.
func (f *sliceFlag) resolve(dur time.Duration) (time.Duration, error) {
	d, err := bench.SliceLength(f.d, dur)
	if errors.Is(err, bench.ErrSliceTooLong) {
		return 0, usagef("servebench run --duration 30m --slice 1m",
			"--slice %s is longer than --duration %s: give a slice of at most the duration (a tenth of it gives ten slices)", f.d, dur)
	}
	return d, err
}
