package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// span is a measured request sent at sentMS that ends at endMS, with one
// token at the end unless failed names an error class.
func span(id, schedMS, sentMS, endMS int64, load record.Load, failed string) *record.Record {
	r := &record.Record{Schema: record.Schema, ID: id, Phase: record.PhaseMeasured, Load: load,
		ScheduledNS: schedMS * msNS, SentNS: sentMS * msNS, EndNS: endMS * msNS}
	if failed != "" {
		r.Error = &record.Error{Class: failed, Message: failed}
		return r
	}
	r.FirstTokenNS, r.OutputTokens = r.EndNS, 1
	return r
}

func onePoint(recs []*record.Record) PointSummary {
	var a Aggregator
	for _, r := range recs {
		a.Add(r)
	}
	return a.Points()[0]
}

func TestClosedLoopHeld(t *testing.T) {
	c64 := record.Load{Concurrency: 64}
	c4 := record.Load{Concurrency: 4}
	tests := []struct {
		name      string
		recs      func() []*record.Record
		wantMean  float64 // time-weighted mean in flight
		wantShare float64 // share of the window with >= 90% of the users in flight
		wantHeld  bool
	}{
		{
			// --concurrency 64 --requests 10: 10 requests of 100 ms all at once
			name: "64 users, 10 requests",
			recs: func() (out []*record.Record) {
				for i := range int64(10) {
					out = append(out, span(i, 0, 0, 100, c64, ""))
				}
				return out
			},
			wantMean: 10, wantShare: 0, wantHeld: false,
		},
		{
			// 4 users, 3 rounds of 100 ms back to back: all 4 busy throughout
			name: "4 users, 3 rounds",
			recs: func() (out []*record.Record) {
				for u := range int64(4) {
					for k := range int64(3) {
						out = append(out, span(u*3+k, k*100, k*100, k*100+100, c4, ""))
					}
				}
				return out
			},
			wantMean: 4, wantShare: 1, wantHeld: true,
		},
		{
			// 4 users; one user's last request runs 200 ms alone after the
			// others' 100 ms: 4 in flight for 1/3 of the window.
			name: "long tail",
			recs: func() []*record.Record {
				return []*record.Record{span(0, 0, 0, 100, c4, ""), span(1, 0, 0, 100, c4, ""),
					span(2, 0, 0, 100, c4, ""), span(3, 0, 0, 300, c4, "")}
			},
			wantMean: 6.0 / 3, wantShare: 1.0 / 3, wantHeld: false,
		},
	}
	for _, tt := range tests {
		p := onePoint(tt.recs())
		if math.Abs(p.ConcurrencyAchieved-tt.wantMean) > 1e-9 || math.Abs(p.ConcurrencyHeldShare-tt.wantShare) > 1e-9 || p.LoadHeld != tt.wantHeld {
			t.Errorf("%s: achieved %v, held share %v, held %v; want %v, %v, %v", tt.name,
				p.ConcurrencyAchieved, p.ConcurrencyHeldShare, p.LoadHeld, tt.wantMean, tt.wantShare, tt.wantHeld)
		}
		warned := strings.Contains(strings.Join(p.Warnings, "\n"), "load not held")
		if warned == tt.wantHeld {
			t.Errorf("%s: held %v but warnings %q", tt.name, p.LoadHeld, p.Warnings)
		}
	}
}

func TestOpenLoopOverload(t *testing.T) {
	r10 := record.Load{Rate: 10}
	tests := []struct {
		name string
		// request i is scheduled and sent at 100·i ms and lasts e2e(i) ms
		n      int
		e2e    func(i int64) int64
		failed func(i int64) string
		want   string // "" when not overloaded, else a part of the reason
		start  int    // in flight when a quarter had arrived
		end    int    // in flight at the last arrival
	}{
		// 50 ms each at 10/s: never more than one in flight
		{"keeps up", 40, func(int64) int64 { return 50 }, nil, "", 0, 1},
		// each request takes 100 ms longer than the one before: the
		// queue grows through the point
		{"queue grows", 40, func(i int64) int64 { return 50 + 100*i }, nil, "arrivals outpaced completions", 6, 20},
		// 3 s each: still ramping up when a quarter had arrived, so the
		// growth in flight is no evidence of overload
		{"slow but steady", 40, func(int64) int64 { return 3000 }, nil, "", 0, 0},
		// the server never answers: every request is cut at the end
		{"stalled", 40, func(i int64) int64 { return 5000 - 100*i }, func(int64) string { return record.ClassTimeoutFirst }, "arrivals outpaced completions", 11, 40},
		// fast timeouts: nothing piles up, but nothing completes
		{"timeouts", 40, func(int64) int64 { return 50 }, func(int64) string { return record.ClassTimeoutFirst }, "timeouts dominate: 40 of 40", 1, 1},
	}
	for _, tt := range tests {
		var recs []*record.Record
		for i := range int64(tt.n) {
			class := ""
			if tt.failed != nil {
				class = tt.failed(i)
			}
			recs = append(recs, span(i, 100*i, 100*i, 100*i+tt.e2e(i), r10, class))
		}
		p := onePoint(recs)
		o := p.Overload
		switch {
		case tt.want == "" && o != nil:
			t.Errorf("%s: overloaded %+v, want not", tt.name, o)
		case tt.want != "" && (o == nil || !strings.Contains(o.Reason, tt.want)):
			t.Errorf("%s: overload %+v, want %q", tt.name, o, tt.want)
		case o != nil && (o.InFlightStart != tt.start || o.InFlightEnd != tt.end):
			t.Errorf("%s: in flight %d → %d, want %d → %d", tt.name, o.InFlightStart, o.InFlightEnd, tt.start, tt.end)
		}
		if o != nil && !strings.Contains(strings.Join(p.Warnings, "\n"), "overloaded: "+o.Reason) {
			t.Errorf("%s: no overload warning in %q", tt.name, p.Warnings)
		}
	}
}

// A point where every request was cancelled completed nothing: its error
// rate is 1, not 0, and the cancelled requests are counted.
func TestErrorRateWhenNothingCompleted(t *testing.T) {
	var recs []*record.Record
	for i := range int64(5) {
		recs = append(recs, span(i, 0, 0, 10, record.Load{Rate: 200}, record.ClassCancelled))
	}
	p := onePoint(recs)
	if p.ErrorRate != 1 || p.Requests.Cancelled != 5 || p.Requests.Failed != 0 {
		t.Errorf("error rate %v, requests %+v: want 1 and 5 cancelled", p.ErrorRate, p.Requests)
	}
}

// Arrivals dropped by the concurrency cap: counted, the point not held,
// and the warning names the cap and the server.
func TestDroppedArrivals(t *testing.T) {
	l := record.Load{Rate: 10, MaxConcurrency: 5}
	var a Aggregator
	for i := range int64(10) {
		a.Add(span(i, 100*i, 100*i, 100*i+50, l, ""))
	}
	run := &record.Run{Points: []record.PointClient{{Index: 0, Load: l, Client: record.ClientStats{Sent: 10, Dropped: 30}}}}
	p := Summarize(run, &a).Points[0]
	w := strings.Join(p.Warnings, "\n")
	if p.LoadHeld || !strings.Contains(w, "30 of 40 arrivals (75%) were dropped") || !strings.Contains(w, "--max-concurrency") ||
		!strings.Contains(w, "server held all 5 places") || strings.Contains(w, "client") {
		t.Errorf("held %v, warnings:\n%s", p.LoadHeld, w)
	}
}

// Users thinking between the turns of a session hold the load though
// nothing of theirs is in flight.
func TestClosedLoopHeldWithThinkTime(t *testing.T) {
	c2 := record.Load{Concurrency: 2}
	var recs []*record.Record
	// two users, each a session of 3 turns: 100 ms requests, 200 ms of
	// thinking between them (the turn is scheduled when it is ready)
	for u := range int64(2) {
		for k := range int64(3) {
			at := 300 * k
			r := span(u*3+k, at, at, at+100, c2, "")
			r.Session, r.Turn = int(u+1), int(k+1)
			recs = append(recs, r)
		}
	}
	p := onePoint(recs)
	if !p.LoadHeld || p.ConcurrencyHeldShare != 1 || math.Abs(p.ConcurrencyAchieved-6.0/7) > 1e-9 {
		t.Errorf("held %v share %v achieved %v: want held throughout, 6/7 in flight on average", p.LoadHeld, p.ConcurrencyHeldShare, p.ConcurrencyAchieved)
	}
}
