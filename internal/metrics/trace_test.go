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
	shape := &record.Trace{Requests: 5, BinS: 1, Arrivals: []int{3, 0, 2}, MeanRate: 2}
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

// A point replaying the trace k times faster (a capacity probe, a target
// above the trace's rate) bins its sends per bin_s ÷ k, and the trace's
// arrivals per second are k times the trace's: the two still compare.
func TestTraceSummaryScaled(t *testing.T) {
	shape := &record.Trace{Requests: 4, BinS: 1, Arrivals: []int{2, 0, 2}, MeanRate: 1.5}
	var a Aggregator
	for i, sched := range []time.Duration{0, 400 * time.Millisecond, 1000 * time.Millisecond, 1200 * time.Millisecond} {
		// at 3 req/s, twice the trace's 1.5: the trace's 0, 0.8, 2 and 2.4 s
		a.Add(&record.Record{Point: 1, Load: record.Load{Rate: 3}, ID: int64(i), Phase: record.PhaseMeasured, TraceLine: int64(i + 1),
			ScheduledNS: int64(sched), SentNS: int64(sched + time.Millisecond), EndNS: int64(sched + 2*time.Millisecond),
			OutputTokens: 1, PromptTokens: 1})
	}
	got := Summarize(&record.Run{Trace: shape}, &a).Points[0].Trace
	if got == nil || got.Scale != 2 {
		t.Fatalf("trace summary %+v: want scale 2", got)
	}
	if want := []int{2, 0, 2}; !slices.Equal(got.Sent, want) {
		t.Errorf("sent per half second %v, want %v (the trace's bins, twice as fast)", got.Sent, want)
	}
	tr, sent := TraceArrivalsPerSecond(shape, got)
	if want := []float64{4, 0, 4}; !slices.Equal(tr, want) || !slices.Equal(sent, want) {
		t.Errorf("per second: trace %v, sent %v; want %v for both", tr, sent, want)
	}
}
