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

// TestOverheadInSlot: one slot, steps of 10 ms, 20 ms of overhead, two
// users. Where the overhead is spent decides a queued request's TTFT: before
// the queue (vLLM), B is through it while A runs and takes A's slot the
// moment it frees; in the slot (Ollama's front server), B takes the slot
// when A frees it and reaches the engine 20 ms later, so the slot stands
// empty for the overhead and B's TTFT grows by it. A lone request's TTFT
// is the same either way.
func TestOverheadInSlot(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		in   string
		ttft []time.Duration // A, B, then A's second request (sent when A ends)
	}{
		{OverheadInQueue, []time.Duration{30 * ms, 50 * ms, 30 * ms}},
		{"", []time.Duration{30 * ms, 50 * ms, 30 * ms}}, // the default is the queue
		{OverheadInSlot, []time.Duration{30 * ms, 70 * ms, 70 * ms}},
	} {
		cfg := DefaultConfig()
		cfg.Jitter = 0
		cfg.Timer = perfmodel.Fitted{Fixed: 0.010, Request: 0.020}
		cfg.Engine.MaxNumSeqs, cfg.Engine.OverheadIn = 1, c.in
		reqs := []Request{{PromptTokens: 10, OutputTokens: 2}, {PromptTokens: 10, OutputTokens: 2}, {PromptTokens: 10, OutputTokens: 2}}
		out, _, err := SimulateClosed(cfg, 2, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range out {
			if o.Err != nil || o.TTFT != c.ttft[i] {
				t.Errorf("overhead in %q: request %d TTFT %v (err %v), want %v", c.in, i, o.TTFT, o.Err, c.ttft[i])
			}
		}
	}
}
