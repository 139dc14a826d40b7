package bench

import (
	"errors"
	"runtime"
	"testing"
)

// TestLimitCPUs: a count in range is the run's GOMAXPROCS until restored;
// 0 leaves it; one out of range is refused and changes nothing.
func TestLimitCPUs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		n, want int // want: GOMAXPROCS while limited
		err     bool
	}{{1, 1, false}, {0, before, false}, {-1, before, true}, {runtime.NumCPU() + 1, before, true}} {
		restore, err := LimitCPUs(c.n)
		if c.err {
			if !errors.Is(err, ErrCPUs) || runtime.GOMAXPROCS(0) != before {
				t.Errorf("LimitCPUs(%d): %v, GOMAXPROCS %d; want ErrCPUs and %d", c.n, err, runtime.GOMAXPROCS(0), before)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("LimitCPUs(%d): GOMAXPROCS %d, want %d", c.n, got, c.want)
		}
		restore()
		if got := runtime.GOMAXPROCS(0); got != before {
			t.Errorf("LimitCPUs(%d) restored to %d, want %d", c.n, got, before)
		}
	}
}
