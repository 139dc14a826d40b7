package load

import (
	"fmt"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// A point stops sending after this many connection failures in a row, or
// after connection failures with no success in between for this long:
// a server that is not there fails each request in microseconds, and
// without a stop a duration-bound point would write hundreds of thousands
// of records that all say the same thing.
const (
	MaxConnectFailures    = 20
	MaxConnectFailureTime = 2 * time.Second
)

// ConnectError is why a point stopped early: its requests could not reach
// the server.
type ConnectError struct {
	Failures int           // connection failures in a row when it stopped
	Over     time.Duration // from the first of them to the last
	Last     string        // the last failure's message
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("stopped sending after %d requests in a row failed to connect over %v (last: %s)",
		e.Failures, e.Over.Round(time.Millisecond), e.Last)
}

// breaker watches finished requests for a run of connection failures and
// calls trip once when the run is long enough. Any answer from the server,
// even an error status, ends the run, but only from a request sent after
// the run's first failure: one sent before (a stream the dying server cut,
// finishing after the refusals began) says nothing of the server since.
// Cancelled requests say nothing.
type breaker struct {
	mu    sync.Mutex
	trip  func()
	run   int
	first time.Time
	// firstSent is the run's first failure's SentNS.
	firstSent int64
	last      time.Time
	msg       string
	tripped   *ConnectError
}

func (b *breaker) observe(rec *record.Record) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.tripped != nil:
		return
	case rec.Error == nil || (rec.Error.Class != record.ClassConnect && rec.Error.Class != record.ClassCancelled):
		if b.run == 0 || rec.SentNS >= b.firstSent {
			b.run = 0
		}
		return
	case rec.Error.Class == record.ClassCancelled:
		return
	}
	if b.run == 0 {
		b.first, b.firstSent = now, rec.SentNS
	}
	b.run++
	b.last, b.msg = now, rec.Error.Message
	if b.run >= MaxConnectFailures || (b.run > 1 && now.Sub(b.first) >= MaxConnectFailureTime) {
		b.tripped = &ConnectError{Failures: b.run, Over: b.last.Sub(b.first), Last: b.msg}
		b.trip()
	}
}

// err returns the reason the breaker tripped, or nil.
func (b *breaker) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tripped == nil {
		return nil
	}
	return b.tripped
}
