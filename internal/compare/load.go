package compare

import (
	"slices"
	"sync"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// RunPath is one run of a side: as the user named it, and its path (a run
// directory or records file).
type RunPath struct{ Name, Path string }

// Loader reads the run at path under o, handing each record to o.Observe,
// with whatever else the caller wants of it (a page, for compare --format
// html).
type Loader[P any] func(path string, o rundir.Options) (*metrics.Summary, P, error)

// Both calls read for sides A (0) and B (1) at once, each on a core of
// its own. The warnings each read says are held and given to warn A first
// (nil drops them). An error is the first side's to fail, after the
// warnings of the sides before it.
func Both(read func(side int, warn func(string)) error, warn func(string)) error {
	var errs [2]error
	var held [2][]string
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = read(i, func(w string) { held[i] = append(held[i], w) }) })
	}
	wg.Wait()
	for i := range errs {
		if warn != nil {
			for _, w := range held[i] {
				warn(w)
			}
		}
		if errs[i] != nil {
			return errs[i]
		}
	}
	return nil
}

// ReadSide reads one side's runs under o with load, whose records are
// pooled as repeats are (each run its own point, so the intervals resample
// runs): the side's n-th run is its own point n<<20 on, so that its points
// are other repeats than its first run's. o.Observe, when set, sees every
// record as pooled. A run is named by its path, or "run NAME (PATH)" when
// named otherwise (a history id); the page is what load gave of the first
// run.
func ReadSide[P any](paths []RunPath, o rundir.Options, load Loader[P]) (*Side, P, error) {
	var side *Side
	var first, none P
	ev := &slo.Evaluator{Keep: Keep}
	observe := o.Observe
	for i, rp := range paths {
		o.Observe = func(r *record.Record) {
			if i > 0 {
				c := *r
				c.Point += i << 20
				r = &c
			}
			ev.Add(r)
			if observe != nil {
				observe(r)
			}
		}
		sum, p, err := load(rp.Path, o)
		if err != nil {
			return nil, none, err
		}
		s := &Side{Name: rp.Path, Summary: sum, Eval: ev}
		if rp.Path != rp.Name {
			s.Name = "run " + rp.Name + " (" + rp.Path + ")"
		}
		if rp.Path != "" && rp.Path != "-" { // standard input is no directory
			s.Dirs = []string{rundir.Resolved(rp.Path)}
		}
		if side == nil {
			side, first = s, p
			continue
		}
		side.Name += ", " + s.Name
		side.Dirs = append(side.Dirs, s.Dirs...)
		side.Summary = pooled(side.Summary, s.Summary, s.Name)
	}
	return side, first, nil
}

// pooled adds run's points to side's summary, as repeats; the side keeps
// its first run's context, and a later run's warnings name it.
func pooled(side, run *metrics.Summary, name string) *metrics.Summary {
	out := *side
	out.Points = append(slices.Clone(side.Points), run.Points...)
	out.Warnings = slices.Clone(side.Warnings)
	for _, w := range run.Warnings {
		out.Warnings = append(out.Warnings, name+": "+w)
	}
	for _, d := range Differences(side.Run, run.Run, nil, nil) {
		if d.Known {
			out.Warnings = append(out.Warnings, name+" is not a repeat of the first run: "+d.Text())
		}
	}
	return &out
}
