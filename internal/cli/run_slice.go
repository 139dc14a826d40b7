package cli

import (
	"errors"
	"flag"
	"time"
)

// Sustained runs (docs/METRICS.md, "Slices and drift"): --slice cuts each
// load point's window into slices of model time and checks them for drift.
//
// A run of at least defaultSliceFrom is sliced by defaultSlice unless told
// otherwise: such a run is long because its sustained behaviour matters,
// and one-minute slices give it at least ten points for the drift's slope.
const (
	defaultSliceFrom = 10 * time.Minute
	defaultSlice     = time.Minute
)

// sliceFlag is --slice: a positive duration, and whether it was given.
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

// resolve is the slice length a run with --duration dur uses: the one
// given, which must fit in the duration, or the default for long runs;
// 0 for none.
func (f *sliceFlag) resolve(dur time.Duration) (time.Duration, error) {
	switch {
	case f.set && dur > 0 && f.d > dur:
		return 0, usagef("servebench run --duration 30m --slice 1m",
			"--slice %s is longer than --duration %s: give a slice of at most the duration (a tenth of it gives ten slices)", f.d, dur)
	case f.set:
		return f.d, nil
	case dur >= defaultSliceFrom:
		return defaultSlice, nil
	}
	return 0, nil
}
