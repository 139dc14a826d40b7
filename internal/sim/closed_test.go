package sim

import (
	"testing"
	"time"

	"github.com/servebench/servebench/internal/perfmodel"
)

// TestSimulateClosedSendDelay: in a closed loop Arrival delays a user's
// send. Steps take 10 ms and requests 20 ms of overhead: two users who
// send together are prefilled in one step; a user who sends a microsecond
// later is ready a microsecond after the engine started a step, and waits
// for the next one.
func TestSimulateClosedSendDelay(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Jitter = 0
	cfg.Timer = perfmodel.Fitted{Fixed: 0.010, Request: 0.020}
	for _, c := range []struct {
		name   string
		second time.Duration // the second user's send delay
		ttft   [2]time.Duration
	}{
		{"together", 0, [2]time.Duration{30 * time.Millisecond, 30 * time.Millisecond}},
		{"a microsecond apart", time.Microsecond, [2]time.Duration{30 * time.Millisecond, 40*time.Millisecond - time.Microsecond}},
	} {
		reqs := []Request{{PromptTokens: 10, OutputTokens: 2}, {Arrival: c.second, PromptTokens: 10, OutputTokens: 2}}
		out, _, err := SimulateClosed(cfg, 2, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range out {
			if o.TTFT != c.ttft[i] || o.Arrival != reqs[i].Arrival {
				t.Errorf("%s: user %d sent at %v, TTFT %v; want sent at %v, TTFT %v", c.name, i, o.Arrival, o.TTFT, reqs[i].Arrival, c.ttft[i])
			}
		}
	}
}
