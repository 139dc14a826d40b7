package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// concSet is the concurrencies --fit-concurrency lists: the closed-loop
// points a fit reads. nil reads every point of the run.
type concSet map[int]bool

// parseConcSet parses --fit-concurrency ("" is nil).
func parseConcSet(s string) (concSet, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	l, err := intList("fit-concurrency", s) // an empty item is an error
	if err != nil {
		return nil, err
	}
	set := concSet{}
	for _, c := range l {
		set[c] = true
	}
	return set, nil
}

// String lists the set in order, as the flag takes it.
func (s concSet) String() string {
	return intsText(slices.Sorted(maps.Keys(s)))
}

// part is the run cut to its closed-loop points whose concurrency is in
// the set (in true), or to all its other points (in false), with their
// records. The summary is a copy; the run's own is left as it is.
func (s concSet) part(sum *metrics.Summary, recs []*record.Record, in bool) (*metrics.Summary, []*record.Record) {
	keep := func(l record.Load) bool { return (l.Concurrency > 0 && s[l.Concurrency]) == in }
	cut := *sum
	cut.Points = nil
	for _, p := range sum.Points {
		if keep(p.Load) {
			cut.Points = append(cut.Points, p)
		}
	}
	var kept []*record.Record
	for _, r := range recs {
		if keep(r.Load) {
			kept = append(kept, r)
		}
	}
	return &cut, kept
}

// missing is an error naming the listed concurrencies that no
// closed-loop point of the run has, nil when it has them all.
func (s concSet) missing(sum *metrics.Summary, dir string) error {
	has := map[int]bool{}
	var all []int
	for _, p := range sum.Points {
		if c := p.Load.Concurrency; c > 0 && !has[c] {
			has[c] = true
			all = append(all, c)
		}
	}
	var lack []int
	for _, c := range slices.Sorted(maps.Keys(s)) {
		if !has[c] {
			lack = append(lack, c)
		}
	}
	if len(lack) == 0 {
		return nil
	}
	slices.Sort(all)
	return &Error{Err: fmt.Errorf("--fit-concurrency %s: %s has no closed-loop point at concurrency %s (its points: %s)", s, dir,
		intsText(lack), intsText(all)), Hint: "list concurrencies the run measured, e.g. --fit-concurrency " + fitExample(sum), Code: ExitUsage}
}

// intsText is "1,4", or "none".
func intsText(l []int) string {
	if len(l) == 0 {
		return "none"
	}
	var s []string
	for _, c := range l {
		s = append(s, fmt.Sprint(c))
	}
	return strings.Join(s, ",")
}

// sameDir reports whether two paths name one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
