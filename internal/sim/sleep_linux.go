package sim

import (
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleep blocks the calling thread in nanosleep, which wakes within
// tens of microseconds, where the Go runtime's timers round up to ~1 ms.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the sleep; the caller loops
}

// preciseTimerSlack is the timer slack of the loop's thread: Linux lets a
// nanosleep of a normal thread overshoot by 50 µs, which at time scale 100
// is most of a decode step.
const preciseTimerSlack = 1000 // ns

// lockForPreciseSleep pins the calling goroutine to its thread and
// shrinks that thread's timer slack; the returned function undoes both.
func lockForPreciseSleep() func() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, preciseTimerSlack, 0, 0, 0) // best effort: the default slack is only coarser
	return func() {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // 0: back to the thread's default
		runtime.UnlockOSThread()
	}
}
