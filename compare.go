package servebench

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/servebench/servebench/internal/compare"
)

// CompareOptions tune Compare; the zero value is servebench compare's.
type CompareOptions struct {
	// Gates are regression thresholds, as servebench compare
	// --fail-on-regression takes them: "ttft p95 +10%", "speed p50 -5%",
	// "e2e p99 +200ms". Comparison.Regressed says whether one failed.
	Gates []string
	// Seed drives the bootstrap; the same seed gives the same intervals
	// (0: 1).
	Seed uint64
}

// Comparison is how B changed from A at every load both measured: each
// metric's change with its confidence interval and verdict (worse,
// better, noise), whether the comparison is controlled (the same model,
// engine, workload and time scale), and the gates judged (compare --json,
// docs/OUTPUT.md).
type Comparison = compare.Result

// Compare compares run b with run a, as servebench compare does with two
// run directories: B − A of TTFT, ITL and E2E percentiles, decode speed,
// throughput and error rate at every common load, with bootstrap
// intervals. A Result of Run or Judge of this process, or of Open (a run
// directory), can be compared.
func Compare(a, b *Result, opt CompareOptions) (*Comparison, error) {
	if a == nil || b == nil || a.eval == nil || b.eval == nil {
		return nil, errors.New("servebench: Compare takes two Results of Run, Judge or Open")
	}
	var gates []compare.Gate
	for _, text := range opt.Gates {
		g, err := compare.ParseGate(text)
		if err != nil {
			return nil, fmt.Errorf("servebench: gate %q: %w", text, err)
		}
		gates = append(gates, g)
	}
	return compare.Compare(a.side("A"), b.side("B"), compare.Options{Gates: gates, Seed: opt.Seed}), nil
}

// side is r as a side of a comparison: named by its runs (Open) or else
// by name; the same directories on both sides are the same runs, which
// Comparison says (SameRun).
func (r *Result) side(name string) *compare.Side {
	return &compare.Side{Name: cmp.Or(r.name, name), Dirs: r.dirs, Summary: r.Summary, Eval: r.eval}
}
