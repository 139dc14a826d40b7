package metrics

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// usersLoop makes the records of users users sending back to back for
// about span, each request taking from short to, now and then, very long,
// returned in the order they ended (as a run writes them).
func usersLoop(rng *rand.Rand, users int, span, long time.Duration) []*record.Record {
	var recs []*record.Record
	for range users {
		t := int64(time.Second) + rng.Int64N(int64(time.Millisecond))
		for t < int64(span) {
			d := int64(200*time.Millisecond) + rng.Int64N(int64(3*time.Second))
			if rng.IntN(500) == 0 {
				d = int64(long) // a stuck request
			}
			r := &record.Record{Point: 0, Phase: record.PhaseMeasured, Load: record.Load{Concurrency: users},
				ScheduledNS: t, SentNS: t, EndNS: t + d, OutputTokens: 5}
			if rng.IntN(20) == 0 {
				r.Error = &record.Error{Class: record.ClassServerError}
			}
			recs = append(recs, r)
			t += d + rng.Int64N(int64(10*time.Millisecond))
		}
	}
	for i, r := range recs {
		r.ID = int64(i)
	}
	sortByEnd(recs)
	return recs
}

func sortByEnd(recs []*record.Record) {
	slices.SortStableFunc(recs, func(a, b *record.Record) int { return cmp.Compare(a.EndNS, b.EndNS) })
}

// TestInFlightSweptEqualKept: a closed loop's concurrency figures and
// slices, swept as records come in end order, equal those computed from
// every interval kept to the end, over a point long enough that most of
// it is swept and let go long before its end; also when records are added
// in another order (two workers one after the other) and given again to
// Sweep in end order.
func TestInFlightSweptEqualKept(t *testing.T) {
	for _, c := range []struct {
		name  string
		long  time.Duration
		apart bool
	}{
		{"short requests", 3 * time.Second, false},
		{"stuck requests of five minutes", 5 * time.Minute, false},
		{"added by worker, swept apart in end order", 3 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := usersLoop(rand.New(rand.NewPCG(5, uint64(c.long))), 40, 50*time.Minute, c.long)
			kept := Aggregator{Slice: time.Minute}
			swept := Aggregator{Slice: time.Minute, Ordered: true, SweepApart: c.apart}
			added := recs
			if c.apart {
				byWorker := func(r *record.Record) int { return int(r.ID % 2) }
				added = slices.Clone(recs)
				slices.SortStableFunc(added, func(a, b *record.Record) int { return cmp.Compare(byWorker(a), byWorker(b)) })
			}
			for _, r := range added {
				kept.Add(r)
				swept.Add(r)
			}
			for _, r := range recs {
				if c.apart {
					swept.Sweep(r)
				}
			}
			want, _ := kept.Point(0)
			got, _ := swept.Point(0)
			if got.ConcurrencyMax != want.ConcurrencyMax || got.ConcurrencyHeldShare != want.ConcurrencyHeldShare || got.LoadHeld != want.LoadHeld {
				t.Errorf("max %d held %v (%v), want %d %v (%v)", got.ConcurrencyMax, got.ConcurrencyHeldShare, got.LoadHeld,
					want.ConcurrencyMax, want.ConcurrencyHeldShare, want.LoadHeld)
			}
			if !reflect.DeepEqual(got.Slices, want.Slices) || !reflect.DeepEqual(got.Warnings, want.Warnings) {
				t.Errorf("slices or warnings differ:\n got %+v %q\nwant %+v %q", got.Slices, got.Warnings, want.Slices, want.Warnings)
			}
			p := swept.points[0]
			if len(recs) < 4*sweepEvery || len(p.sw.pending) > len(recs)/2 || len(p.intervals) != 0 {
				t.Errorf("%d records, %d still pending, %d kept: the sweep lets nothing go", len(recs), len(p.sw.pending), len(p.intervals))
			}
		})
	}
}

// TestInFlightSweptLate: a request sent before an instant already swept
// makes the point say its concurrency figures are approximate.
func TestInFlightSweptLate(t *testing.T) {
	recs := usersLoop(rand.New(rand.NewPCG(9, 9)), 40, 40*time.Minute, 3*time.Second)
	late := *recs[0]
	late.EndNS = recs[len(recs)-1].EndNS // sent at the start, ended last: 40 minutes
	recs = append(recs, &late)
	a := Aggregator{Ordered: true}
	for _, r := range recs {
		a.Add(r)
	}
	s, _ := a.Point(0)
	found := false
	for _, w := range s.Warnings {
		found = found || len(w) > 30 && w[:30] == "concurrency figures approximat"
	}
	if !found {
		t.Errorf("no warning that concurrency figures are approximate: %q", s.Warnings)
	}
}

// TestInFlightSettledLetsGo: told by the run which instants no request
// still to come was sent before (Settled), the sweep keeps only what is in
// flight around them, not the last sweepLookback of requests, and its
// figures are still those of every interval kept.
func TestInFlightSettledLetsGo(t *testing.T) {
	recs := usersLoop(rand.New(rand.NewPCG(6, 6)), 40, 20*time.Minute, 3*time.Second)
	next := make([]int64, len(recs)+1) // earliest send from record i on
	next[len(recs)] = recs[len(recs)-1].EndNS
	for i := len(recs) - 1; i >= 0; i-- {
		next[i] = min(next[i+1], recs[i].SentNS)
	}
	kept := Aggregator{Slice: time.Minute}
	settled := Aggregator{Slice: time.Minute, Ordered: true}
	most := 0
	for i, r := range recs {
		kept.Add(r)
		settled.Settled(next[i])
		settled.Add(r)
		most = max(most, len(settled.points[0].sw.pending))
	}
	want, _ := kept.Point(0)
	got, _ := settled.Point(0)
	if got.ConcurrencyMax != want.ConcurrencyMax || got.ConcurrencyHeldShare != want.ConcurrencyHeldShare ||
		!reflect.DeepEqual(got.Slices, want.Slices) || !reflect.DeepEqual(got.Warnings, want.Warnings) {
		t.Errorf("max %d held %v %q, want %d %v %q", got.ConcurrencyMax, got.ConcurrencyHeldShare, got.Warnings,
			want.ConcurrencyMax, want.ConcurrencyHeldShare, want.Warnings)
	}
	if most > 2*sweepEvery {
		t.Errorf("up to %d intervals pending of %d: Settled let nothing go", most, len(recs))
	}
}
