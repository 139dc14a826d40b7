package calib

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// TestStepChanges: a held-out run of the same scripted server reads no
// change; one whose every decode step is 30% slower reads +30% at each
// batch size both runs saw, and warns; a 5% change does not warn.
func TestStepChanges(t *testing.T) {
	decode := func(scale float64) func(int) float64 {
		return func(s int) float64 { return scale * (2 + 3*float64(s)) }
	}
	run := func(scale float64, seed uint64) []request {
		e := scripted{decode: decode(scale), slots: 4, overhead: 5}
		rng := rand.New(rand.NewPCG(seed, 1))
		return append(e.closedLoop(1, 24, 64, 48, rng), e.closedLoop(4, 48, 64, 48, rng)...)
	}
	fit, err := fitRequests(run(1, 1), nil, Options{Bootstrap: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(fit.Table) < 2 {
		t.Fatalf("step table %+v: want at least one and four sequences", fit.Table)
	}
	for _, c := range []struct {
		scale float64
		warn  bool
	}{{1, false}, {1.3, true}, {1.05, false}, {0.75, true}} {
		changes := fit.stepChanges("c=4", run(c.scale, 2))
		// Sizes seen often enough in both runs; a rare one may fall short in either.
		if len(changes) < 2 {
			t.Fatalf("scale %v: changes %+v, want the sizes both runs saw of the fit's table %+v", c.scale, changes, fit.Table)
		}
		for _, ch := range changes {
			// Steps are jittered ±10% in each run: medians of hundreds
			// of them agree within a few percent.
			if math.Abs((1+ch.Change)/c.scale-1) > 0.03 {
				t.Errorf("scale %v, %d sequences: change %+.3f (%.2f against %.2f ms), want %+.3f", c.scale, ch.Seqs, ch.Change, ch.OtherMS, ch.FitMS, c.scale-1)
			}
		}
		w := DriftWarnings(changes, "runs/b", false)
		if got := len(w) == 1; got != c.warn || len(w) > 1 {
			t.Errorf("scale %v: warnings %q, want some: %v", c.scale, w, c.warn)
		}
		for _, s := range w {
			if !strings.Contains(s, "runs/b") || !strings.HasPrefix(s, "c=4: the server's own decode step moved against the fit's run (") ||
				!strings.Contains(s, " at 4 sequences (") || !strings.HasSuffix(s, "the server's change between the runs, not the fit's") {
				t.Errorf("warning %q does not name the run and the server's step", s)
			}
		}
		// Held-out points of the fit's own run (--fit-concurrency): the
		// change is from point to point.
		for _, s := range DriftWarnings(changes, "runs/b", true) {
			if !strings.HasPrefix(s, "c=4: the server's own decode step moved against the fitted points of the same run (") ||
				!strings.HasSuffix(s, "the server's own change from point to point, not the fit's") {
				t.Errorf("same run: warning %q", s)
			}
		}
	}
}

// recordOf is a scripted request as the run's record, at point p.
func recordOf(q request, p int, load record.Load) *record.Record {
	ns := func(ms float64) int64 { return int64(ms * 1e6) }
	r := &record.Record{Point: p, Load: load, Phase: record.PhaseMeasured, SentNS: ns(q.sent), FirstTokenNS: ns(q.first), EndNS: ns(q.end),
		PromptTokens: q.prompt, OutputTokens: q.output}
	for i, at := range q.at {
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: ns(at) - r.SentNS, Tokens: q.tokens[i]})
	}
	return r
}

// TestStepChangesByPoint: a held-out run whose server slowed down between
// its two points reads no change at the first and the slowdown at the
// second, and warns for the second alone.
func TestStepChangesByPoint(t *testing.T) {
	run := func(scale float64, seed uint64, users int) []request {
		e := scripted{decode: func(s int) float64 { return scale * (2 + 3*float64(s)) }, slots: 4, overhead: 5}
		return e.closedLoop(users, 12*users, 64, 48, rand.New(rand.NewPCG(seed, 1)))
	}
	fit, err := fitRequests(append(run(1, 1, 1), run(1, 2, 4)...), nil, Options{Bootstrap: 1})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*record.Record
	for _, q := range run(1, 3, 4) {
		recs = append(recs, recordOf(q, 0, record.Load{Concurrency: 4}))
	}
	for _, q := range run(1.25, 4, 8) {
		// The second point starts after the first ends, as a run's do.
		recs = append(recs, recordOf(q.shifted(1e6), 1, record.Load{Concurrency: 8}))
	}
	byPoint := map[string][]StepChange{}
	for _, c := range fit.StepChanges(recs) {
		byPoint[c.Point] = append(byPoint[c.Point], c)
	}
	for point, want := range map[string]float64{"c=4": 0, "c=8": 0.25} {
		got := byPoint[point]
		if len(got) == 0 {
			t.Fatalf("no steps compared at %s: %+v", point, byPoint)
		}
		for _, c := range got {
			if math.Abs((1+c.Change)/(1+want)-1) > 0.03 {
				t.Errorf("%s, %d sequences: change %+.3f, want %+.3f", point, c.Seqs, c.Change, want)
			}
		}
	}
	w := DriftWarnings(fit.StepChanges(recs), "runs/b", false)
	if len(w) != 1 || !strings.HasPrefix(w[0], "c=8: ") {
		t.Errorf("warnings %q, want one, for c=8", w)
	}
	// The same load again, as a third point: each of the two is named by
	// its point, and each gets a warning of its own.
	for _, q := range run(1.25, 5, 8) {
		recs = append(recs, recordOf(q.shifted(2e6), 2, record.Load{Concurrency: 8}))
	}
	named := map[string]bool{}
	for _, c := range fit.StepChanges(recs) {
		named[c.Point] = true
	}
	if !named["c=4"] || !named["c=8 (point 1)"] || !named["c=8 (point 2)"] || len(named) != 3 {
		t.Errorf("points named %v, want c=4, c=8 (point 1), c=8 (point 2)", named)
	}
	w = DriftWarnings(fit.StepChanges(recs), "runs/b", false)
	if len(w) != 2 || !strings.HasPrefix(w[0], "c=8 (point 1): ") || !strings.HasPrefix(w[1], "c=8 (point 2): ") {
		t.Errorf("warnings %q, want one for each c=8 point", w)
	}
}

func TestStepChangeMoved(t *testing.T) {
	for _, c := range []struct {
		name string
		ch   StepChange
		want bool
	}{
		{"moved", StepChange{FitMS: 20, OtherMS: 26, SEMS: 0.5, Share: 0.9, Change: 0.3}, true},
		{"slower by less than 10%", StepChange{FitMS: 20, OtherMS: 21.8, SEMS: 0.1, Share: 0.9, Change: 0.09}, false},
		{"faster by 10%", StepChange{FitMS: 20, OtherMS: 18, SEMS: 0.5, Share: 0.9, Change: -0.1}, true},
		{"within two standard errors", StepChange{FitMS: 20, OtherMS: 26, SEMS: 3.5, Share: 0.9, Change: 0.3}, false},
		{"a size at the point's edges", StepChange{FitMS: 7, OtherMS: 9, SEMS: 0.2, Share: 0.02, Change: 0.29}, false},
	} {
		if got := c.ch.Moved(); got != c.want {
			t.Errorf("%s: Moved() = %v, want %v", c.name, got, c.want)
		}
	}
}
