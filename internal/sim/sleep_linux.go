package sim

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep, which wakes within
// tens of microseconds, where the Go runtime's timers round up to ~1 ms.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the sleep; the caller loops
}
