package bench

import (
	"errors"
	"runtime"
)

// ErrCPUs is a CPU count outside [0, runtime.NumCPU()].
var ErrCPUs = errors.New("CPU count out of range")

// LimitCPUs sets GOMAXPROCS to n for a run (0 leaves Go's default) and
// returns what puts the old setting back. run.json's client_cpus is the
// setting the run had, so its client-CPU warnings are judged by it.
func LimitCPUs(n int) (restore func(), err error) {
	if n < 0 || n > runtime.NumCPU() {
		return nil, ErrCPUs
	}
	if n == 0 {
		return func() {}, nil
	}
	prev := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(prev) }, nil
}
