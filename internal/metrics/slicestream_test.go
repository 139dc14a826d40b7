package metrics

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// streamRecords makes n measured requests of a closed loop of users,
// some failed, some without a first token, with chunks of one to three
// tokens, returned in the order they ended (as a run writes them).
func streamRecords(rng *rand.Rand, n int) []*record.Record {
	const base = int64(5 * time.Second)
	recs := make([]*record.Record, n)
	for i := range recs {
		sent := base + rng.Int64N(int64(60*time.Second))
		if i < 50 {
			sent = base + rng.Int64N(int64(time.Millisecond)) // the first round, at the mark
		}
		r := &record.Record{Point: 0, ID: int64(i), Phase: record.PhaseMeasured, Load: record.Load{Concurrency: 50},
			ScheduledNS: sent, SentNS: sent}
		at := int64(0)
		switch rng.IntN(10) {
		case 0:
			r.EndNS = sent + rng.Int64N(int64(3*time.Second))
			r.Error = &record.Error{Class: record.ClassServerError, Message: "boom"}
		case 1:
			r.EndNS = sent + rng.Int64N(int64(time.Second)) // a reply without tokens
		default:
			at = int64(50*time.Millisecond) + rng.Int64N(int64(500*time.Millisecond))
			r.FirstTokenNS = sent + at
			for range 1 + rng.IntN(40) {
				k := 1 + rng.IntN(3)
				r.Chunks = append(r.Chunks, record.Chunk{AtNS: at, Tokens: k})
				r.OutputTokens += k
				at += rng.Int64N(int64(80 * time.Millisecond))
			}
			r.OutputTokens += rng.IntN(2) // tokens no chunk accounts for
			r.EndNS = sent + at
		}
		recs[i] = r
	}
	slices.SortStableFunc(recs, func(a, b *record.Record) int { return int(a.EndNS - b.EndNS) })
	return recs
}

// TestSlicesStreamedEqualKept: slices counted as records come, given a
// lower bound of the point's first send, are the slices counted from every
// request kept to the end: for a bound at the first send or below it, for
// records in the order they ended or in any order, and for slices narrower
// than the bound's slack (everything kept).
func TestSlicesStreamedEqualKept(t *testing.T) {
	for _, c := range []struct {
		name     string
		slack    time.Duration // the bound below the first send
		slice    time.Duration
		shuffled bool
		settled  bool          // the run says which sends are still to come
		before   time.Duration // every instant moved this much before the epoch
	}{
		{"bound at the first send", 0, 1700 * time.Millisecond, false, false, 0},
		{"bound below it", 300 * time.Millisecond, 1700 * time.Millisecond, false, false, 0},
		{"any order", 300 * time.Millisecond, 2 * time.Second, true, false, 0},
		{"slack wider than a slice", 3 * time.Second, time.Second, false, false, 0},
		{"slices of a minute", 20 * time.Millisecond, time.Minute, true, false, 0},
		{"slack narrowed as the run settles", 500 * time.Millisecond, 1700 * time.Millisecond, false, true, 0},
		{"slack wider than a slice, narrowed", 3 * time.Second, time.Second, false, true, 0},
		{name: "before the epoch, never settled", slack: 300 * time.Millisecond, slice: 2 * time.Second, shuffled: true, before: 2 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(c.slack)))
			recs := streamRecords(rng, 3000)
			if c.shuffled {
				rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
			}
			if c.settled {
				recs = firstEndsLast(recs)
			}
			for _, r := range recs {
				shiftRecord(r, -int64(c.before))
			}
			first := recs[0].SentNS
			for _, r := range recs {
				first = min(first, r.SentNS)
			}
			kept := Aggregator{Slice: c.slice}
			streamed := Aggregator{Slice: c.slice}
			streamed.From(0, first-int64(c.slack))
			for i, r := range recs {
				if c.settled {
					settleAsRun(&streamed, recs, i)
				}
				kept.Add(r)
				streamed.Add(r)
			}
			want, _ := kept.Point(0)
			got, _ := streamed.Point(0)
			if len(want.Slices) < 2 {
				t.Fatalf("%d slices: the test needs several", len(want.Slices))
			}
			if !reflect.DeepEqual(got.Slices, want.Slices) {
				for i := range want.Slices {
					if !reflect.DeepEqual(got.Slices[i], want.Slices[i]) {
						t.Errorf("slice %d:\n got %+v\nwant %+v", i, got.Slices[i], want.Slices[i])
					}
				}
			}
			if !reflect.DeepEqual(got.Warnings, want.Warnings) {
				t.Errorf("warnings %q, want %q", got.Warnings, want.Warnings)
			}
		})
	}
}

// firstEndsLast makes the request sent first fail at the very end, so
// that the origin stays uncertain, and requests are counted, until then.
func firstEndsLast(recs []*record.Record) []*record.Record {
	f, end := recs[0], recs[0].EndNS
	for _, r := range recs {
		if r.SentNS < f.SentNS {
			f = r
		}
		end = max(end, r.EndNS)
	}
	f.EndNS, f.FirstTokenNS, f.Chunks, f.OutputTokens = end+1, 0, nil, 0
	f.Error = &record.Error{Class: record.ClassServerError, Message: "late"}
	slices.SortStableFunc(recs, func(a, b *record.Record) int { return int(a.EndNS - b.EndNS) })
	return recs
}

// shiftRecord moves r's instants by d ns.
func shiftRecord(r *record.Record, d int64) {
	r.ScheduledNS, r.SentNS, r.EndNS = r.ScheduledNS+d, r.SentNS+d, r.EndNS+d
	if r.FirstTokenNS != 0 {
		r.FirstTokenNS += d
	}
}

// settleAsRun tells a what a run's sink would before record i: every
// hundred records, the earliest send still to come.
func settleAsRun(a *Aggregator, recs []*record.Record, i int) {
	if i%100 != 0 {
		return
	}
	next := recs[i].SentNS
	for _, r := range recs[i:] {
		next = min(next, r.SentNS)
	}
	a.Settled(next)
}

// TestSlicesStreamedKeepFew: records in the order they ended keep nearly
// no request for the end, with the bound at the point's first send, or
// seconds below it (the run's start, before its tokenizer and connections
// are ready) once the run says which sends are still to come.
func TestSlicesStreamedKeepFew(t *testing.T) {
	for _, c := range []struct {
		name    string
		slack   time.Duration
		settled bool
	}{
		{"bound at the first send", 0, false},
		{"bound below it, narrowed as the run settles", 1500 * time.Millisecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := streamRecords(rand.New(rand.NewPCG(1, 1)), 3000)
			first := recs[0].SentNS
			for _, r := range recs {
				first = min(first, r.SentNS)
			}
			a := Aggregator{Slice: 2 * time.Second}
			a.From(0, first-int64(c.slack))
			for i, r := range recs {
				if c.settled {
					settleAsRun(&a, recs, i)
				}
				a.Add(r)
			}
			if n := len(a.points[0].sliceReqs); n > 300 {
				t.Errorf("%d of %d requests kept for slicing", n, len(recs))
			}
		})
	}
}

// TestSlicesStreamedBoundWrong: a request sent before the bound makes the
// slices say they are approximate.
func TestSlicesStreamedBoundWrong(t *testing.T) {
	recs := streamRecords(rand.New(rand.NewPCG(2, 2)), 500)
	a := Aggregator{Slice: 2 * time.Second}
	a.From(0, recs[len(recs)/2].SentNS)
	for _, r := range recs {
		a.Add(r)
	}
	s, _ := a.Point(0)
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return len(w) > 20 && w[:20] == "slices approximate: " }) {
		t.Errorf("no warning that the slices are approximate: %q", s.Warnings)
	}
}
