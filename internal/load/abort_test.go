package load

import (
	"context"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// TestAbortEndsGraceAtOnce: after a stop, requests in flight keep running
// for the grace period unless abort is closed; then each is cancelled at
// once and still emitted.
func TestAbortEndsGraceAtOnce(t *testing.T) {
	tests := []struct {
		name      string
		abort     bool
		maxWait   time.Duration // how long Run may take after the stop
		cancelled int
	}{
		// Without abort the 1 h requests run into the 300 ms grace.
		{"grace", false, 2 * time.Second, 3},
		// With abort they are cancelled well before the grace ends.
		{"abort", true, 200 * time.Millisecond, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			epoch := time.Now()
			f := &fakeServer{epoch: epoch, latency: time.Hour}
			s := &sink{}
			r := &Runner{Epoch: epoch, Send: f.send, Emit: s.emit, Grace: 300 * time.Millisecond}
			stop, cancel := context.WithCancel(context.Background())
			abort := make(chan struct{})
			ctx := WithAbort(stop, abort)
			go func() {
				for f.inflight.Load() < 3 {
					time.Sleep(time.Millisecond)
				}
				cancel()
				if tt.abort {
					close(abort)
				}
			}()
			start := time.Now()
			r.Run(ctx, Point{Load: record.Load{Concurrency: 3}, Requests: 100})
			el := time.Since(start)
			if tt.abort && el > tt.maxWait {
				t.Errorf("Run took %v after abort, want under %v", el, tt.maxWait)
			}
			if !tt.abort && el < 300*time.Millisecond {
				t.Errorf("Run took %v, want the 300ms grace", el)
			}
			n := 0
			for _, rec := range s.recs {
				if rec.Error != nil && rec.Error.Class == record.ClassCancelled {
					n++
				}
			}
			if n != tt.cancelled || len(s.recs) != tt.cancelled {
				t.Errorf("emitted %d records, %d cancelled; want %d cancelled", len(s.recs), n, tt.cancelled)
			}
		})
	}
}
