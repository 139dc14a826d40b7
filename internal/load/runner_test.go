package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// fakeServer is a Sender that takes a fixed time per request and tracks how
// many requests are in flight.
type fakeServer struct {
	epoch    time.Time
	latency  time.Duration
	inflight atomic.Int64
	peak     atomic.Int64
}

func (f *fakeServer) send(ctx context.Context, rec *record.Record) {
	rec.SentNS = int64(time.Since(f.epoch))
	n := f.inflight.Add(1)
	for old := f.peak.Load(); n > old && !f.peak.CompareAndSwap(old, n); old = f.peak.Load() {
	}
	defer f.inflight.Add(-1)
	select {
	case <-time.After(f.latency):
	case <-ctx.Done():
		rec.Error = &record.Error{Class: record.ClassCancelled, Message: ctx.Err().Error()}
	}
	rec.EndNS = int64(time.Since(f.epoch))
}

type sink struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (s *sink) emit(r *record.Record) {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
}

func (s *sink) count(phase string) int {
	n := 0
	for _, r := range s.recs {
		if r.Phase == phase {
			n++
		}
	}
	return n
}

func TestClosedLoopCountsAndConcurrency(t *testing.T) {
	tests := []struct {
		name          string
		point         Point
		wantMeasured  int
		wantWarmup    int
		wantPeakAtMax int64
	}{
		{"requests only", Point{Load: record.Load{Concurrency: 4}, Requests: 20}, 20, 0, 4},
		{"warm-up requests are extra", Point{Load: record.Load{Concurrency: 2}, Requests: 10, WarmupRequests: 3}, 10, 3, 2},
		{"concurrency 1 is serial", Point{Load: record.Load{Concurrency: 1}, Requests: 5}, 5, 0, 1},
	}
	for _, tt := range tests {
		epoch := time.Now()
		f := &fakeServer{epoch: epoch, latency: 5 * time.Millisecond}
		var s sink
		r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit}
		c, err := r.Run(context.Background(), tt.point)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.count(record.PhaseMeasured); got != tt.wantMeasured {
			t.Errorf("%s: measured %d, want %d", tt.name, got, tt.wantMeasured)
		}
		if got := s.count(record.PhaseWarmup); got != tt.wantWarmup {
			t.Errorf("%s: warm-up %d, want %d", tt.name, got, tt.wantWarmup)
		}
		if got := f.peak.Load(); got > tt.wantPeakAtMax {
			t.Errorf("%s: %d in flight, above concurrency %d", tt.name, got, tt.wantPeakAtMax)
		}
		if c.Sent != tt.wantMeasured+tt.wantWarmup {
			t.Errorf("%s: client says %d sent, want %d", tt.name, c.Sent, tt.wantMeasured+tt.wantWarmup)
		}
		ids := map[int64]bool{}
		for _, rec := range s.recs {
			if ids[rec.ID] {
				t.Errorf("%s: duplicate id %d", tt.name, rec.ID)
			}
			ids[rec.ID] = true
			if rec.ScheduledNS > rec.SentNS {
				t.Errorf("%s: sent before scheduled", tt.name)
			}
		}
	}
}

func TestClosedLoopDuration(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: 10 * time.Millisecond}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit}
	start := time.Now()
	if _, err := r.Run(context.Background(), Point{Load: record.Load{Concurrency: 2}, Duration: 200 * time.Millisecond, WarmupDuration: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if el < 250*time.Millisecond || el > 2*time.Second {
		t.Errorf("ran %v, want about 250ms", el)
	}
	if s.count(record.PhaseWarmup) == 0 || s.count(record.PhaseMeasured) == 0 {
		t.Errorf("want both phases, got warm-up %d measured %d", s.count(record.PhaseWarmup), s.count(record.PhaseMeasured))
	}
}

func TestOpenLoopScheduleAndCap(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: 30 * time.Millisecond}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit}
	// 40 arrivals over 195 ms; a cap of 3 at 30 ms per request serves
	// 100 req/s, half the offered 200: about 20 arrivals are sent (some
	// after waiting in the client), the rest find the cap full until the
	// last arrival and are dropped, not sent late.
	p := Point{Load: record.Load{Rate: 200, MaxConcurrency: 3}, Requests: 40, Arrival: Arrival{Process: ArrivalConstant}, Seed: 1}
	start := time.Now()
	c, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// Bounds below leave a busy machine's scheduling room (tens of ms)
	// while a loop that sent every arrival late would still cross them:
	// the 20 extra arrivals at 100 req/s would run the point to ~400 ms.
	if el := time.Since(start); el > 195*time.Millisecond+30*time.Millisecond+130*time.Millisecond {
		t.Errorf("the point ran %v: arrivals were sent after the point's last arrival", el)
	}
	if len(s.recs)+c.Dropped != 40 || c.Sent != len(s.recs) {
		t.Errorf("%d records, %d sent, %d dropped: want records = sent and sent + dropped = 40", len(s.recs), c.Sent, c.Dropped)
	}
	// About 20; more when a busy machine stretches the 30 ms requests.
	if c.Dropped < 10 || c.Dropped > 32 {
		t.Errorf("%d dropped, want about 20", c.Dropped)
	}
	if got := f.peak.Load(); got > 3 {
		t.Errorf("%d in flight, above the cap of 3", got)
	}
	// Requests that waited for a place under the cap show the wait as
	// sent − scheduled.
	var waited int
	for _, rec := range s.recs {
		if rec.SentNS-rec.ScheduledNS > int64(10*time.Millisecond) {
			waited++
		}
		if rec.SentNS-start.Sub(epoch).Nanoseconds() > int64(250*time.Millisecond) {
			t.Errorf("request sent %v after the point started, past its last arrival", time.Duration(rec.SentNS))
		}
	}
	if waited < 5 {
		t.Errorf("only %d requests show client queueing; coordinated omission?", waited)
	}
	if c.InFlightPeak > 3 {
		t.Errorf("client peak %d above cap", c.InFlightPeak)
	}
	// The waits for the cap are the server's, not dispatch lag: counted
	// as lag they read 100 ms and more here; 40 ms leaves room for a busy
	// machine's wake-ups.
	if c.LagP99MS > 40 {
		t.Errorf("dispatch lag p99 %.1f ms counts the waits for the cap", c.LagP99MS)
	}
}

// A stalled server (it never answers) must not hold an open loop past its
// last arrival plus the drain: the requests in flight are cut and recorded
// as timeouts, one record per request sent.
func TestOpenLoopStalledServerDrains(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: time.Hour}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit, Grace: 100 * time.Millisecond}
	p := Point{Load: record.Load{Rate: 100}, Requests: 10, Arrival: Arrival{Process: ArrivalConstant}}
	start := time.Now()
	c, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// last arrival at 90 ms + a drain of 100 ms (nothing completed)
	if el := time.Since(start); el < 180*time.Millisecond || el > time.Second {
		t.Errorf("ran %v, want about 190 ms", el)
	}
	if len(s.recs) != 10 || c.Sent != 10 {
		t.Fatalf("%d records, %d sent: want 10", len(s.recs), c.Sent)
	}
	for _, rec := range s.recs {
		if rec.Error == nil || rec.Error.Class != record.ClassTimeoutFirst || !strings.Contains(rec.Error.Message, "when the load point ended") {
			t.Errorf("cut request recorded as %+v, want a first-token timeout", rec.Error)
		}
	}
}

// A stalled server holds a closed loop bounded by a duration no longer
// than its duration plus the drain: the requests in flight are cut and
// recorded as timeouts. The durations are ten times apart, so that a
// loaded machine cannot blur them.
func TestClosedLoopStalledServerDrains(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: time.Hour}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit, Grace: 100 * time.Millisecond}
	p := Point{Load: record.Load{Concurrency: 3}, Duration: 100 * time.Millisecond}
	done := make(chan Client)
	go func() {
		c, _ := r.Run(context.Background(), p)
		done <- c
	}()
	var c Client
	select {
	case c = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a stalled closed loop of 100 ms and a 100 ms drain still runs after 10 s")
	}
	if len(s.recs) != 3 || c.Sent != 3 {
		t.Fatalf("%d records, %d sent: want 3", len(s.recs), c.Sent)
	}
	for _, rec := range s.recs {
		if rec.Error == nil || rec.Error.Class != record.ClassTimeoutFirst || !strings.Contains(rec.Error.Message, "when the load point ended") {
			t.Errorf("cut request recorded as %+v, want a first-token timeout", rec.Error)
		}
	}
}

// The drain is long enough for a server that still answers: twice the
// longest completed request when that exceeds the grace.
func TestOpenLoopDrainWaitsForAnsweringServer(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: 150 * time.Millisecond}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit, Grace: 10 * time.Millisecond}
	p := Point{Load: record.Load{Rate: 50}, Requests: 10, Arrival: Arrival{Process: ArrivalConstant}}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for _, rec := range s.recs {
		if rec.Error != nil {
			t.Errorf("request cut by the drain although the server answers: %v", rec.Error)
		}
	}
}

// connRefused fails every request at once, as a server that is not there.
func connRefused(ctx context.Context, rec *record.Record) {
	rec.Error = &record.Error{Class: record.ClassConnect, Message: "dial tcp 127.0.0.1:1: connect: connection refused"}
}

func TestConnectionFailuresStopThePoint(t *testing.T) {
	tests := []struct {
		name  string
		point Point
		slack int // requests already sent when the limit is reached
	}{
		// closed loop: 4 users race, so a few more than the limit may be in flight
		{"closed", Point{Load: record.Load{Concurrency: 4}, Requests: 100000}, 4},
		// open loop at 2000/s: a dispatcher that a busy machine held back
		// catches up in a burst before the first failures are counted, so
		// up to about 50 ms of arrivals may be out; without the stop it
		// would send all 100000
		{"open", Point{Load: record.Load{Rate: 2000}, Requests: 100000, Arrival: Arrival{Process: ArrivalConstant}}, 100},
	}
	for _, tt := range tests {
		var s sink
		r := &Runner{Epoch: time.Now(), Send: connRefused, Emit: s.emit}
		c, err := r.Run(context.Background(), tt.point)
		var ce *ConnectError
		if !errors.As(err, &ce) || ce.Failures < MaxConnectFailures || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: error %v, want a ConnectError after %d failures", tt.name, err, MaxConnectFailures)
		}
		if len(s.recs) != c.Sent || c.Sent < MaxConnectFailures || c.Sent > MaxConnectFailures+tt.slack {
			t.Errorf("%s: %d sent, %d records: want one record per request and about %d", tt.name, c.Sent, len(s.recs), MaxConnectFailures)
		}
	}
}

// A slow trickle of failures stops after MaxConnectFailureTime without a
// success, before the count is reached.
func TestConnectionFailuresStopAfterTime(t *testing.T) {
	var s sink
	r := &Runner{Epoch: time.Now(), Send: connRefused, Emit: s.emit}
	p := Point{Load: record.Load{Rate: 4}, Requests: 100, Arrival: Arrival{Process: ArrivalConstant}}
	start := time.Now()
	_, err := r.Run(context.Background(), p)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a ConnectError", err)
	}
	if el := time.Since(start); el < MaxConnectFailureTime || el > MaxConnectFailureTime+time.Second {
		t.Errorf("stopped after %v, want about %v", el, MaxConnectFailureTime)
	}
	if ce.Failures != 9 || len(s.recs) != 9 {
		t.Errorf("%d failures, %d records: want 9 (at 0, 0.25 … 2 s)", ce.Failures, len(s.recs))
	}
}

// Any answer from the server ends a run of connection failures.
func TestConnectionFailureRunResetByAnAnswer(t *testing.T) {
	var n atomic.Int64
	send := func(ctx context.Context, rec *record.Record) {
		if n.Add(1)%10 == 0 {
			rec.Error = &record.Error{Class: record.ClassHTTP5xx, Message: "500"}
			return
		}
		connRefused(ctx, rec)
	}
	var s sink
	r := &Runner{Epoch: time.Now(), Send: send, Emit: s.emit}
	if _, err := r.Run(context.Background(), Point{Load: record.Load{Concurrency: 1}, Requests: 100}); err != nil {
		t.Errorf("runs of 9 failures stopped the point: %v", err)
	}
	if len(s.recs) != 100 {
		t.Errorf("%d records, want 100", len(s.recs))
	}
}

func TestOpenLoopScheduledTimesFollowSchedule(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: time.Millisecond}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit}
	p := Point{Load: record.Load{Rate: 100}, Requests: 20, Arrival: Arrival{Process: ArrivalConstant}, Seed: 3}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	min := s.recs[0].ScheduledNS
	for _, rec := range s.recs {
		min = minI(min, rec.ScheduledNS)
	}
	for _, rec := range s.recs {
		off := time.Duration(rec.ScheduledNS - min)
		if off%(10*time.Millisecond) > time.Microsecond && 10*time.Millisecond-off%(10*time.Millisecond) > time.Microsecond {
			t.Errorf("scheduled offset %v is not on the 10ms grid", off)
		}
	}
}

func minI(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func TestInterruptGraceThenCancel(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: time.Hour}
	var s sink
	r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit, Grace: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	c, err := r.Run(ctx, Point{Load: record.Load{Concurrency: 3}, Requests: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Interrupted {
		t.Error("client stats do not say interrupted")
	}
	if len(s.recs) != 3 {
		t.Fatalf("got %d records, want the 3 in flight", len(s.recs))
	}
	for _, rec := range s.recs {
		if rec.Error == nil || rec.Error.Class != record.ClassCancelled {
			t.Errorf("in-flight request not recorded as cancelled: %+v", rec.Error)
		}
	}
}

func TestInterruptLetsShortRequestsFinish(t *testing.T) {
	epoch := time.Now()
	f := &fakeServer{epoch: epoch, latency: 40 * time.Millisecond}
	var s sink
	ctx, cancel := context.WithCancel(context.Background())
	// Interrupt when both users' first requests are in flight, not after
	// a fixed time: a busy machine can fire a timer after the first
	// answers came back and the next requests went out.
	var sent atomic.Int64
	send := func(ctx context.Context, rec *record.Record) {
		if sent.Add(1) == 2 {
			cancel()
		}
		f.send(ctx, rec)
	}
	r := &Runner{Epoch: epoch, Send: send, Emit: s.emit, Grace: time.Second}
	if _, err := r.Run(ctx, Point{Load: record.Load{Concurrency: 2}, Requests: 100}); err != nil {
		t.Fatal(err)
	}
	if len(s.recs) != 2 {
		t.Fatalf("got %d records, want 2", len(s.recs))
	}
	for _, rec := range s.recs {
		if rec.Error != nil {
			t.Errorf("request within the grace period was cut: %v", rec.Error)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Point{
		{Load: record.Load{Concurrency: 1}}, // no stop condition
		{Requests: 1},                       // no load
		{Load: record.Load{Concurrency: 1, Rate: 1}, Requests: 1}, // both
	} {
		if p.Validate() == nil {
			t.Errorf("%+v: want error", p)
		}
	}
}

// An answer to a request sent before a run of connection failures began
// (a stream the dying server cut, finishing after the refusals) does not
// end the run; one sent after it does.
func TestConnectionFailureRunKeptByAnEarlierRequest(t *testing.T) {
	for _, c := range []struct {
		name   string
		sentNS int64 // of the cut stream
		trips  bool
	}{{"sent before the failures", 5, true}, {"sent after the first failure", 12, false}} {
		tripped := false
		b := &breaker{trip: func() { tripped = true }}
		fail := func(sent int64) {
			b.observe(&record.Record{SentNS: sent, Error: &record.Error{Class: record.ClassConnect, Message: "refused"}})
		}
		for i := range MaxConnectFailures / 2 {
			fail(int64(10 + i))
		}
		b.observe(&record.Record{SentNS: c.sentNS, Error: &record.Error{Class: record.ClassStreamCut, Message: "cut"}})
		for i := range MaxConnectFailures - MaxConnectFailures/2 {
			fail(int64(30 + i))
		}
		if tripped != c.trips {
			t.Errorf("%s: tripped %v after %d failures around it, want %v", c.name, tripped, MaxConnectFailures, c.trips)
		}
	}
}
