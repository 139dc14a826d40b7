package load

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// schedule is a Schedule over fixed offsets, lines 10, 20, ...
func schedule(offs ...time.Duration) *Schedule {
	return &Schedule{Last: offs[len(offs)-1], Arrivals: func(yield func(time.Duration, int64) bool) error {
		for i, off := range offs {
			if !yield(off, int64(10*(i+1))) {
				return nil
			}
		}
		return nil
	}}
}

// A replayed schedule is sent at its offsets, each record naming its line,
// and the warm-up is its first requests.
func TestReplaySchedule(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: time.Millisecond}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit}
	offs := []time.Duration{0, 3 * time.Millisecond, 3 * time.Millisecond, 11 * time.Millisecond, 20 * time.Millisecond}
	p := Point{Load: record.Load{Rate: 200}, Requests: 4, WarmupRequests: 1, Schedule: schedule(offs...)}
	c, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sent != 5 || len(s.recs) != 5 || s.count(record.PhaseWarmup) != 1 {
		t.Fatalf("sent %d, %d records, %d warm-up", c.Sent, len(s.recs), s.count(record.PhaseWarmup))
	}
	sort.Slice(s.recs, func(i, j int) bool { return s.recs[i].TraceLine < s.recs[j].TraceLine })
	for i, rec := range s.recs {
		if got, want := time.Duration(rec.ScheduledNS-s.recs[0].ScheduledNS), offs[i]; got != want || rec.TraceLine != int64(10*(i+1)) {
			t.Errorf("request %d: line %d scheduled at %v, want line %d at %v", i, rec.TraceLine, got, 10*(i+1), want)
		}
	}
}

// blocked is a Sender whose requests never answer until cancelled.
func blocked(ctx context.Context, rec *record.Record) {
	<-ctx.Done()
	rec.Error = &record.Error{Class: record.ClassCancelled, Message: "cut"}
}

// Under a cap, arrivals that find no place by the last one are dropped
// and counted, as for --rate; a schedule that cannot be read through is
// the point's error.
func TestReplayCapAndError(t *testing.T) {
	r := &Runner{Epoch: time.Now(), Send: blocked, Emit: (&sink{}).emit, Grace: time.Millisecond}
	p := Point{Load: record.Load{Rate: 100, MaxConcurrency: 1}, Requests: 4, Schedule: schedule(0, time.Millisecond, 2*time.Millisecond, 3*time.Millisecond)}
	c, err := r.Run(context.Background(), p)
	if err != nil || c.Sent != 1 || c.Dropped != 3 {
		t.Errorf("sent %d, dropped %d (%v): want 1 and 3", c.Sent, c.Dropped, err)
	}
	bad := errors.New("the trace file changed")
	p = Point{Load: record.Load{Rate: 100}, Requests: 4, Schedule: &Schedule{Arrivals: func(yield func(time.Duration, int64) bool) error {
		yield(0, 1)
		return bad
	}}}
	r.Send = (&fakeServer{epoch: r.Epoch}).send
	if c, err := r.Run(context.Background(), p); !errors.Is(err, bad) || c.Sent != 1 {
		t.Errorf("sent %d, %v: want 1 and the schedule's error", c.Sent, err)
	}
}
