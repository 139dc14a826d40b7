package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestClockLostCounted: a busy engine whose loop the host ran late skips
// to the wall clock and counts the skipped time (client time base) in
// servebench_sim_clock_lost_seconds_total; an idle engine's jump, or a
// lag within rebaseLag, counts nothing.
func TestClockLostCounted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TimeScale = 10
	l := &loop{eng: newEngine(cfg), scale: cfg.TimeScale, wall0: time.Now().Add(-time.Second), met: newMetrics(cfg)}
	lost := func() float64 { return counterValue(t, l.met, ClockLostMetric) }

	l.intake() // idle: the clock jumps to now, and that is no loss
	if lost() != 0 {
		t.Fatalf("an idle engine's jump counted %v s", lost())
	}
	l.eng.add(&seq{box: newMailbox(), prompt: 10, target: 10}, l.eng.now) // busy from here
	l.eng.now -= 0.002 * cfg.TimeScale                                    // 2 ms behind: within rebaseLag
	l.intake()
	if lost() != 0 {
		t.Fatalf("a lag within rebaseLag counted %v s", lost())
	}
	l.eng.now -= 0.25 * cfg.TimeScale // a quarter second of wall time behind
	l.intake()
	if got := lost(); math.Abs(got-0.25) > 0.02 {
		t.Errorf("lost %.3f s after falling 0.25 s behind, want about 0.25", got)
	}
	if now := l.virtual(time.Now()); l.eng.now < now-0.01*cfg.TimeScale {
		t.Errorf("the engine's clock %.3f did not move to now %.3f", l.eng.now, now)
	}
	if !strings.HasPrefix(ClockLostMetric, "servebench_") {
		t.Errorf("%s is not named as servebench's own", ClockLostMetric)
	}
}

// counterValue reads a counter of m's registry.
func counterValue(t *testing.T, m *metrics, name string) float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
