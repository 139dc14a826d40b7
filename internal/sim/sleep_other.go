//go:build !linux

package sim

import "time"

// preciseSleep is time.Sleep where no finer sleep is wired up.
func preciseSleep(d time.Duration) { time.Sleep(d) }

// lockForPreciseSleep has nothing to adjust here.
func lockForPreciseSleep() func() { return func() {} }
