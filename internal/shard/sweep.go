package shard

import (
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/rundir"
)

// The requests in flight of a closed loop are swept in the order requests
// ended, keeping a window of intervals (metrics, inflight.go); in any
// other order every interval is kept to the end, 24 bytes a request and
// more to sort them, so that a merge's memory followed its records. Each
// worker's records are in end order; reading the workers again side by
// side, always taking the record that ended first, gives the sweep the
// merged run in end order.

// endCursor is one worker's records, read again on the merged clock.
type endCursor struct {
	*rundir.Cursor
	shift int64
}

// next advances to the worker's next record, on the merged clock.
func (e *endCursor) next() bool {
	if !e.Next() {
		return false
	}
	shiftRecord(e.Record(), e.shift)
	return true
}

// sweepByEnd gives agg.Sweep every record of the workers, in the order
// their requests ended on the merged clock, in model time.
func sweepByEnd(workers []*Worker, zero time.Time, scale float64, agg *metrics.Aggregator, strict bool) error {
	var live []*endCursor
	defer func() {
		for _, e := range live {
			e.Close()
		}
	}()
	for _, w := range workers {
		c, err := rundir.OpenCursor(w.Dir, strict)
		if err != nil {
			return err
		}
		e := &endCursor{c, int64(w.epoch.Sub(zero))}
		if !e.next() {
			c.Close()
			if err := c.Err(); err != nil {
				return err
			}
			continue
		}
		live = append(live, e)
	}
	for len(live) > 0 {
		i := 0
		for j, e := range live {
			if e.Record().EndNS < live[i].Record().EndNS {
				i = j
			}
		}
		e := live[i]
		agg.Sweep(e.Record().ModelTime(scale))
		if !e.next() {
			e.Close()
			live = append(live[:i], live[i+1:]...)
			if err := e.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
