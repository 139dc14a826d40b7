package slo

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// TestQueueGrowthFromSchedule: queue growth is judged on the TTFT from
// the schedule, which is what an open-loop user waits. Here the queue
// builds in the client (each request is sent 30 ms later than the one
// before, relative to its schedule) while the server answers every
// request it gets in 50 ms: the TTFT from sending is flat, the TTFT from
// the schedule rises 300 ms per second of arrivals, and the load fails.
func TestQueueGrowthFromSchedule(t *testing.T) {
	load := record.Load{Rate: 10}
	for _, tt := range []struct {
		name     string
		queueMS  int64 // added client queueing per request
		overload bool
	}{
		{"server keeps up, client queue grows", 30, true},
		{"no queue", 0, false},
	} {
		var ev Evaluator
		for i := range int64(30) {
			r := req(0, load, i, 100*i+tt.queueMS*i, 50, 10, 3)
			r.ScheduledNS = 100 * i * ms
			ev.Add(r)
		}
		pv := ev.Evaluate(mustParse(t, "error_rate <= 1%"), Options{})[0]
		if got := strings.Contains(pv.Overloaded, "does not keep up"); got != tt.overload {
			t.Errorf("%s: overloaded %q, want overloaded %v", tt.name, pv.Overloaded, tt.overload)
		}
	}
}
