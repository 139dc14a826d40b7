package compare

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// A row either run measured on invalid evidence is INCONCLUSIVE, with the
// run and the reason, and a gate there neither fails nor passes: exit 4,
// not 3 or 0. A gate that fails on a valid row still fails (3 first).
func TestInvalidRowIsInconclusive(t *testing.T) {
	g, err := ParseGate("ttft p95 +10%")
	if err != nil {
		t.Fatal(err)
	}
	c2 := record.Load{Concurrency: 2}
	build := func() (*Side, *Side) {
		a := series(400, constant(100), constant(10))
		b := series(400, constant(150), constant(10))
		// c=2 with one request at a time: never 2 in flight, so not held
		for i := range 30 {
			t := float64(i) * 300
			a = append(a, req(1, c2, 100+i, t, 100, 10, 8))
			b = append(b, req(1, c2, 100+i, t, 101, 10, 8))
		}
		return side("runs/a", baseRun(), a...), side("runs/b", baseRun(), b...)
	}

	// c=1 valid and 50% worse, c=2 not held: the failure on valid
	// evidence decides.
	a, b := build()
	r := Compare(a, b, Options{Gates: []Gate{g}})
	if len(r.Points) != 2 || r.Points[0].Inconclusive != "" || !strings.Contains(r.Points[1].Inconclusive, "A: load_not_held") ||
		!strings.Contains(r.Points[1].Inconclusive, "B: load_not_held") {
		t.Fatalf("points %+v", r.Points)
	}
	if !r.Regressed || r.Inconclusive || !r.Gates[0].Failed || r.Gates[1].Failed || !r.Gates[1].Inconclusive {
		t.Errorf("regressed %v inconclusive %v gates %+v: want c=1 failed, c=2 inconclusive, regressed", r.Regressed, r.Inconclusive, r.Gates)
	}

	// B's simulator fell behind at c=1 too: nothing failed on valid
	// evidence, so the comparison is inconclusive.
	a, b = build()
	b.Summary.Points[0].Validity.Add(metrics.Reason{Code: metrics.InvalidSimBehind, Text: "skipped 12% of the point"})
	r = Compare(a, b, Options{Gates: []Gate{g}})
	if r.Regressed || !r.Inconclusive || r.Gates[0].Failed || !r.Gates[0].Inconclusive ||
		r.Points[0].Inconclusive != "B: sim_behind: skipped 12% of the point" {
		t.Errorf("regressed %v inconclusive %v point %q gates %+v", r.Regressed, r.Inconclusive, r.Points[0].Inconclusive, r.Gates)
	}
}
