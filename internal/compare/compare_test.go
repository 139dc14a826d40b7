package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// Each case knows the difference B − A exactly (the records are built so)
// and where its interval must lie.
func TestChanges(t *testing.T) {
	spread := scattered(100, 40) // TTFT 100..139 ms, in no order over time
	tests := []struct {
		name     string
		a, b     []*record.Record
		metric   string
		wantDiff float64
		// The interval must contain the difference; verdict says on
		// which side of 0 it lies.
		verdict string
		thin    bool
	}{
		// A shift of 50 ms against a spread of 40 ms: far out of noise.
		{"ttft shift out of noise", series(160, spread, constant(10)), series(160, shifted(spread, 50), constant(10)), "ttft p50", 50, Worse, false},
		// A shift of 1 ms against that spread: the interval holds 0.
		{"ttft shift inside noise", series(160, spread, constant(10)), series(160, shifted(spread, 1), constant(10)), "ttft p50", 1, Noise, false},
		// No noise at all: every gap 10 ms, then 12 ms.
		{"itl exact", series(160, spread, constant(10)), series(160, spread, constant(12)), "itl p95", 2, Worse, false},
		// Decode speed is better higher: 1000/10 → 1000/8 tok/s.
		{"speed better", series(160, spread, constant(10)), series(160, spread, constant(8)), "speed p50", 25, Better, false},
		// speed p95 is the p5 of speeds; falling is worse. Four slices of
		// 100 requests each hold five beyond it.
		{"speed p95 worse", series(400, spread, constant(8)), series(400, spread, constant(10)), "speed p95", -25, Worse, false},
		// 160 requests are too few for that: unknown.
		{"speed p95 of few", series(160, spread, constant(8)), series(160, spread, constant(10)), "speed p95", -25, Unknown, false},
		// E2E = TTFT + 7 gaps; 160 requests are too few for a p99 of every
		// slice, so one run each cannot tell its noise.
		{"e2e follows ttft and itl", series(160, constant(100), constant(10)), series(160, constant(100), constant(20)), "e2e p99", 70, Unknown, false},
		// One in four requests fails in B, none in A.
		{"error rate", series(160, spread, constant(10)), everyFourthFails(series(160, spread, constant(10))), "error_rate", 0.25, Worse, false},
		// No request fails on either side: no resample differs.
		{"error rate same", series(160, spread, constant(10)), series(160, spread, constant(10)), "error_rate", 0, NoChange, false},
		// Ten requests: a p95 rests on fewer than the 20 it needs, and
		// cannot be cut into time slices: unknown, however far it moved.
		{"thin p95", series(10, spread, constant(10)), series(10, shifted(spread, 50), constant(10)), "ttft p95", 50, Unknown, true},
		// TTFT drifts up 0..40 ms over each run: the request bootstrap alone
		// calls a 10 ms shift a change; the runs' own slices show drift
		// that large, so it is noise.
		{"drift within the runs", series(160, linear(100, 0.25), constant(10)), series(160, linear(110, 0.25), constant(10)), "ttft p50", 10, Noise, false},
	}
	for _, tt := range tests {
		r := Compare(side("a", nil, tt.a...), side("b", nil, tt.b...), Options{})
		if len(r.Points) != 1 {
			t.Fatalf("%s: %d common points, want 1", tt.name, len(r.Points))
		}
		c := changeOf(t, r.Points[0], tt.metric)
		if c.Diff == nil || math.Abs(*c.Diff-tt.wantDiff) > 1e-6 {
			t.Errorf("%s: diff %v, want %v", tt.name, fmtPtr(c.Diff), tt.wantDiff)
			continue
		}
		if (c.CI == nil) != (tt.verdict == Unknown) || c.CI != nil && (c.CI.Low > *c.Diff || c.CI.High < *c.Diff) {
			t.Errorf("%s: interval %+v does not contain the difference %v", tt.name, c.CI, *c.Diff)
		}
		if c.Verdict != tt.verdict || c.Thin != tt.thin {
			t.Errorf("%s: verdict %q thin %v, want %q thin %v (interval %+v)", tt.name, c.Verdict, c.Thin, tt.verdict, tt.thin, c.CI)
		}
	}
}

// everyFourthFails replaces every fourth request with a failure.
func everyFourthFails(recs []*record.Record) []*record.Record {
	for i, r := range recs {
		if i%4 == 3 {
			recs[i] = failed(0, c1, i, float64(r.SentNS)/1e6, 5)
		}
	}
	return recs
}

func fmtPtr(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// A metric one side did not measure is missing, not a change; and a
// throughput of one run each has no interval and says why.
func TestMissingAndNoInterval(t *testing.T) {
	a := series(20, constant(100), constant(10))
	var b []*record.Record
	for i := range 20 {
		b = append(b, failed(0, c1, i, float64(i)*10, 5))
	}
	r := Compare(side("a", nil, a...), side("b", nil, b...), Options{})
	p := r.Points[0]
	if c := changeOf(t, p, "ttft p50"); c.Verdict != Missing || c.Diff != nil || !strings.Contains(c.Why, "B") {
		t.Errorf("ttft when B measured nothing: %+v", c)
	}
	r = Compare(side("a", nil, a...), side("b", nil, a...), Options{})
	c := changeOf(t, r.Points[0], "throughput")
	if c.CI != nil || c.Verdict != NoChange || !strings.Contains(c.Why, "one run each") {
		t.Errorf("throughput of one run each: %+v", c)
	}
}

// Repeats give aggregate throughput an interval over runs, and its value
// is the mean of the runs' own.
func TestThroughputOverRepeats(t *testing.T) {
	run := func(point int, startMS, itl float64) []*record.Record {
		var out []*record.Record
		for i := range 10 {
			out = append(out, req(point, c1, point*100+i, startMS+float64(i)*(10+7*itl), 10, itl, 8))
		}
		return out
	}
	a := append(run(0, 0, 10), run(1, 10_000, 10)...)
	b := append(run(0, 0, 20), run(1, 10_000, 20)...)
	r := Compare(side("a", nil, a...), side("b", nil, b...), Options{})
	p := r.Points[0]
	if p.RunsA != 2 || p.RunsB != 2 {
		t.Fatalf("runs %d, %d; want 2, 2", p.RunsA, p.RunsB)
	}
	c := changeOf(t, p, "throughput")
	// 80 tokens over 10 requests of 80 ms back to back, then of 150 ms.
	wantA, wantB := 80/(9*80.0+80)*1000, 80/(9*150.0+150)*1000
	if c.A == nil || math.Abs(*c.A-wantA) > 0.01 || math.Abs(*c.B-wantB) > 0.01 {
		t.Fatalf("throughput %v → %v, want %v → %v", fmtPtr(c.A), fmtPtr(c.B), wantA, wantB)
	}
	if c.CI == nil || c.Verdict != Worse {
		t.Errorf("throughput over repeats: verdict %q interval %+v", c.Verdict, c.CI)
	}
}

// Load points are matched by the whole load, the workload cell included;
// what matches nothing is said plainly.
func TestMatching(t *testing.T) {
	small := record.Load{Workload: "in=128 out=64", Concurrency: 1}
	large := record.Load{Workload: "in=2048 out=64", Concurrency: 1}
	c4 := record.Load{Workload: "in=128 out=64", Concurrency: 4}
	a := side("a", nil, req(0, small, 1, 0, 10, 5, 4), req(1, large, 2, 100, 10, 5, 4), req(2, c4, 3, 200, 10, 5, 4))
	b := side("b", nil, req(0, small, 1, 0, 12, 5, 4))
	r := Compare(a, b, Options{})
	if len(r.Points) != 1 || r.Points[0].Load != small {
		t.Fatalf("points %+v, want only %v", r.Points, small)
	}
	if len(r.OnlyA) != 2 || len(r.OnlyB) != 0 {
		t.Errorf("only in A %v, only in B %v", r.OnlyA, r.OnlyB)
	}
	want := []string{`different workloads: A measured "in=128 out=64", "in=2048 out=64", B measured "in=128 out=64"`,
		"measured by A only, not compared: in=128 out=64 c=4, in=2048 out=64 c=1"}
	if strings.Join(r.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(r.Notes, "\n"), strings.Join(want, "\n"))
	}
	r = Compare(side("a", nil, req(0, large, 1, 0, 10, 5, 4)), b, Options{})
	if len(r.Points) != 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "no common load points: A measured in=2048 out=64 c=1, B measured in=128 out=64 c=1") {
		t.Errorf("no common points: %q", r.Notes)
	}
}

// The same seed gives the same intervals, so a comparison can be
// reproduced.
func TestReproducible(t *testing.T) {
	a, b := series(160, scattered(100, 60), constant(10)), series(160, scattered(104, 60), constant(10))
	r1 := Compare(side("a", nil, a...), side("b", nil, b...), Options{})
	r2 := Compare(side("a", nil, a...), side("b", nil, b...), Options{})
	c1, c2 := changeOf(t, r1.Points[0], "ttft p50"), changeOf(t, r2.Points[0], "ttft p50")
	if *c1.CI != *c2.CI {
		t.Errorf("intervals differ: %+v vs %+v", c1.CI, c2.CI)
	}
}

// A percentile interval can miss the difference measured (a tail of few
// values, or few resamples); the interval reported always contains it.
func TestIntervalContainsDifference(t *testing.T) {
	a, b := series(12, linear(100, 9), constant(10)), series(12, linear(104, 7), constant(10))
	r := Compare(side("a", nil, a...), side("b", nil, b...), Options{Iterations: 1})
	for _, c := range r.Points[0].Changes {
		if c.CI != nil && (c.CI.Low > *c.Diff || c.CI.High < *c.Diff) {
			t.Errorf("%s: interval %+v misses the difference %v", c.Metric, c.CI, *c.Diff)
		}
	}
}

// BenchmarkCompare compares two runs of 10,000 requests × 64 tokens at one
// load, as compare does after reading them: every headline statistic with
// its interval and noise band.
func BenchmarkCompare(b *testing.B) {
	run := func(seed uint64) *Side {
		rng := rand.New(rand.NewPCG(seed, 3))
		recs := make([]*record.Record, 10_000)
		for i := range recs {
			recs[i] = req(0, c1, i, float64(i)*20, 100+50*rng.ExpFloat64(), 7+rng.ExpFloat64(), 64)
		}
		return side("run", nil, recs...)
	}
	a, bb := run(1), run(2)
	b.ResetTimer()
	for range b.N {
		Compare(a, bb, Options{})
	}
}

// Repeats are the unit of replication: runs whose levels differ by ±20 ms
// make a 10 ms change noise, although each run's requests alone would
// call it; the change says its noise came from the runs.
func TestRunsAreTheUnit(t *testing.T) {
	runs := func(offsets ...float64) []*record.Record {
		var out []*record.Record
		for p, off := range offsets {
			for i := range 100 {
				out = append(out, req(p, c1, p*1000+i, float64(p*100_000+i*200), 100+off+float64(i*37%10), 10, 8))
			}
		}
		return out
	}
	r := Compare(side("a", nil, runs(0, 20, -20)...), side("b", nil, runs(10, 30, -10)...), Options{})
	c := changeOf(t, r.Points[0], "ttft p50")
	if c.Verdict != Noise || c.Noise == nil || c.Noise.Source != FromRuns || c.Noise.RunsA != 3 || c.Noise.RunsB != 3 {
		t.Errorf("ttft p50 over 3 runs each: verdict %q, noise %+v, interval %+v", c.Verdict, c.Noise, c.CI)
	}
	// One run against three: the one run's slices and the three runs'
	// spread together make the band.
	r = Compare(side("a", nil, runs(0)...), side("b", nil, runs(10, 30, -10)...), Options{})
	c = changeOf(t, r.Points[0], "ttft p50")
	if c.Verdict != Noise || c.Noise == nil || c.Noise.Source != FromSlices || c.Noise.SlicesA != 5 || c.Noise.SlicesB != 0 {
		t.Errorf("ttft p50, one run against three: verdict %q, noise %+v, interval %+v", c.Verdict, c.Noise, c.CI)
	}
}

// TestHeadlineCoversTable: every metric of metrics.Table with a Headline
// place is compared at every point, each place taken once.
func TestHeadlineCoversTable(t *testing.T) {
	places := map[int]string{}
	for _, m := range metrics.Table {
		if m.Headline == 0 {
			continue
		}
		if other, ok := places[m.Headline]; ok {
			t.Errorf("%s and %s share Headline place %d", m.Name, other, m.Headline)
		}
		places[m.Headline] = m.Name
		if !slices.ContainsFunc(Headline, func(s string) bool { return slo.MustStatistic(s).Metric == m.Name }) {
			t.Errorf("%s has Headline place %d but compare does not compare it", m.Name, m.Headline)
		}
	}
}

// TestLongRunsFromASample: runs past Keep requests are compared from an
// evenly spaced sample of their requests, which still calls a clear
// change and says the intervals rest on a sample; runs within Keep are
// resampled whole and say nothing of it.
func TestLongRunsFromASample(t *testing.T) {
	cases := []struct {
		name     string
		n        int
		wantNote string // "" when no note of a sample is wanted
	}{
		{"within Keep", 2000, ""},
		{"past Keep", Keep + 3616, "A from 10000 of its 20000 requests, B from 10000 of its 20000 requests"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := series(c.n, scattered(100, 50), constant(10))
			b := series(c.n, shifted(scattered(100, 50), 20), constant(10))
			r := Compare(side("a", nil, a...), side("b", nil, b...), Options{Iterations: 200})
			p := r.Points[0]
			if got := changeOf(t, p, "ttft p50"); got.Verdict != Worse || got.CI == nil {
				t.Errorf("ttft p50: verdict %s, interval %v; want worse with an interval", got.Verdict, got.CI)
			}
			note := strings.Join(p.Notes, "\n")
			if c.wantNote == "" && strings.Contains(note, "sample") || !strings.Contains(note, c.wantNote) {
				t.Errorf("notes %q; want one with %q", note, c.wantNote)
			}
		})
	}
}
