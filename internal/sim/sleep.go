package sim

import "time"

// Below coarseMin a Go timer's ~1 ms granularity would dominate a step, so
// the last stretch before a deadline is slept with preciseSleep.
const (
	coarseMin    = 3 * time.Millisecond
	coarseMargin = 2 * time.Millisecond
)

// sleeper waits for absolute deadlines without busy-waiting.
type sleeper struct{ t *time.Timer }

func newSleeper() *sleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &sleeper{t: t}
}

// until sleeps until deadline; it reports false if quit closed first.
func (s *sleeper) until(deadline time.Time, quit <-chan struct{}) bool {
	for {
		d := time.Until(deadline)
		if d <= 0 {
			return true
		}
		if d < coarseMin {
			preciseSleep(d)
			continue
		}
		s.t.Reset(d - coarseMargin)
		select {
		case <-s.t.C:
		case <-quit:
			s.t.Stop()
			return false
		}
	}
}
