package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// TestTimelineLongRunBounded: past timelineExact requests the timeline is
// kept in fine bins (no request is kept), the page's bins hold every token,
// every ns in flight and every error of the requests, and records added in
// another order give the same timeline (a run's page equals report's).
func TestTimelineLongRunBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	n := timelineExact + 5000
	recs := make([]*record.Record, n)
	var tokens, busy, errs float64
	for i := range recs {
		sent := int64(time.Second) + rng.Int64N(int64(2*time.Hour))
		d := int64(100*time.Millisecond) + rng.Int64N(int64(5*time.Second))
		r := &record.Record{Point: i % 3, Phase: record.PhaseMeasured, Load: record.Load{Concurrency: 10 * (i%3 + 1)},
			SentNS: sent, FirstTokenNS: sent + d/10, EndNS: sent + d, OutputTokens: 1 + rng.IntN(300)}
		if rng.IntN(25) == 0 {
			r.Error, r.FirstTokenNS = &record.Error{Class: record.ClassServerError}, 0
			errs++
		} else {
			tokens += float64(r.OutputTokens)
		}
		busy += float64(d)
		recs[i] = r
	}
	var a, b Curves
	for _, r := range recs {
		a.Add(r)
	}
	for _, i := range rng.Perm(n) {
		b.Add(recs[i])
	}
	if a.reqs != nil || a.fine == nil || len(a.fine.bins) > fineBins {
		t.Fatalf("past %d requests: %d kept, fine bins %v", timelineExact, len(a.reqs), a.fine != nil)
	}
	tl := a.Timeline(300)
	if len(tl.T) > 300 || len(tl.T) < 100 {
		t.Errorf("%d bins, want at most 300 and not far fewer", len(tl.T))
	}
	var gotTok, gotBusy, gotErrs float64
	for i := range tl.T {
		gotTok += tl.OutputTPS[i] * tl.BinS
		gotBusy += tl.Running[i] * tl.BinS * 1e9
		gotErrs += tl.Errors[i]
	}
	if math.Abs(gotTok-tokens) > 1e-6*tokens || math.Abs(gotBusy-busy) > 1e-9*busy || gotErrs != errs {
		t.Errorf("bins hold %v tokens, %v ns in flight, %v errors; want %v, %v, %v", gotTok, gotBusy, gotErrs, tokens, busy, errs)
	}
	if len(tl.Spans) != 3 {
		t.Errorf("%d point spans, want 3", len(tl.Spans))
	}
	if tb := b.Timeline(300); !reflect.DeepEqual(tl, tb) {
		t.Error("the timeline depends on the order records came in")
	}
}
