package bench

import (
	"context"
	"errors"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/tokenize"
	"github.com/servebench/servebench/internal/workload"
)

// take returns the next request to send. For a multi-turn workload a
// waiting session's next turn comes first, so sessions go on before new
// ones start: in a closed loop the user waits out its session's think
// time, and the record's scheduled time becomes the moment the turn was
// ready (the user was thinking until then); in an open loop an arrival
// takes a turn that is ready, else starts a session. A turn can only be
// built once the previous answer is in, so it never comes from the
// prepared items.
func (f *feed) take(ctx context.Context, epoch time.Time, rec *record.Record) (workload.Item, error) {
	if rec.TraceLine > 0 {
		return f.byLine(ctx, rec.TraceLine)
	}
	if f.sessions != nil {
		it, at, ok, err := f.sessions.Resume(ctx, f.closed)
		if ok {
			if ready := int64(at.Sub(epoch)); ready > rec.ScheduledNS {
				rec.ScheduledNS = ready
			}
			return it, err
		}
	}
	it, ok := f.next(ctx)
	if !ok {
		return it, errors.New(f.reason())
	}
	return it, nil
}

// messages converts a workload's chat messages to the backend's.
func messages(ms []tokenize.Message) []backend.Message {
	if ms == nil {
		return nil
	}
	out := make([]backend.Message, len(ms))
	for i, m := range ms {
		out[i] = backend.Message(m)
	}
	return out
}
