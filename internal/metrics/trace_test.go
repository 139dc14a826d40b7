package metrics

import (
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// A replayed trace's point bins its sends as the trace bins its arrivals,
// from the first scheduled arrival, and measures sent − scheduled.
func TestTraceSummary(t *testing.T) {
	shape := &record.Trace{Requests: 5, BinS: 1, Arrivals: []int{3, 0, 2}}
	start := int64(7 * time.Second)
	var a Aggregator
	for i, c := range []struct{ sched, lag time.Duration }{
		{0, 2 * time.Millisecond},                        // bin 0
		{300 * time.Millisecond, 4 * time.Millisecond},   // bin 0
		{900 * time.Millisecond, 200 * time.Millisecond}, // scheduled in bin 0, sent in bin 1
		{2100 * time.Millisecond, 6 * time.Millisecond},  // bin 2; the fifth arrival was dropped
	} {
		a.Add(&record.Record{Point: 0, Load: record.Load{Rate: 2}, ID: int64(i), Phase: record.PhaseMeasured, TraceLine: int64(i + 2),
			ScheduledNS: start + int64(c.sched), SentNS: start + int64(c.sched+c.lag), EndNS: start + int64(c.sched+c.lag) + 1e6,
			OutputTokens: 1, PromptTokens: 1})
	}
	s := Summarize(&record.Run{Trace: shape}, &a)
	got := s.Points[0].Trace
	if got == nil {
		t.Fatal("no trace summary")
	}
	if want := []int{2, 1, 1}; !slices.Equal(got.Sent, want) {
		t.Errorf("sent per bin %v, want %v", got.Sent, want)
	}
	if p50, max := *got.ScheduleErrorMS.P50, *got.ScheduleErrorMS.Max; p50 != 5 || max != 200 || got.Replayed != 0.8 {
		t.Errorf("schedule error p50 %v max %v, replayed %v: want 5, 200, 0.8", p50, max, got.Replayed)
	}
	tr, sent := TraceArrivalsPerSecond(shape, got)
	if !slices.Equal(tr, []float64{3, 0, 2}) || !slices.Equal(sent, []float64{2, 1, 1}) {
		t.Errorf("per second: %v %v", tr, sent)
	}
	// without a trace in run.json, nothing
	if s := Summarize(&record.Run{}, &a); s.Points[0].Trace != nil {
		t.Errorf("a trace summary without a trace")
	}
}
