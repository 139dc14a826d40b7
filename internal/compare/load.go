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
// html); nil reads the summary alone (rundir.Summarize).
type Loader[P any] func(path string, o rundir.Options) (*metrics.Summary, P, error)

// LoadSides reads both sides at once, each on a core of its own, under o
// with load; the warnings reading each says are held and given to o.Warn
// A first. pages are what load gave of each side's first run. An error is
// the first side's to fail, after the warnings of the sides before it.
func LoadSides[P any](paths [2][]RunPath, o rundir.Options, load Loader[P]) (sides [2]*Side, pages [2]P, err error) {
	if load == nil {
		load = func(path string, o rundir.Options) (*metrics.Summary, P, error) {
			var none P
			s, err := rundir.Summarize(path, nil, o)
			return s, none, err
		}
	}
	var errs [2]error
	var held [2][]string
	var wg sync.WaitGroup
	for i := range sides {
		ro := o
		ro.Warn = func(w string) { held[i] = append(held[i], w) }
		wg.Go(func() { sides[i], pages[i], errs[i] = loadSide(paths[i], ro, load) })
	}
	wg.Wait()
	for i := range sides {
		if o.Warn != nil {
			for _, w := range held[i] {
				o.Warn(w)
			}
		}
		if errs[i] != nil {
			return sides, pages, errs[i]
		}
	}
	return sides, pages, nil
}

// loadSide reads one side's runs, whose records are pooled as repeats are
// (each run its own point, so the intervals resample runs): the side's
// n-th run is its own point n<<20 on, so that its points are other
// repeats than its first run's.
func loadSide[P any](paths []RunPath, o rundir.Options, load Loader[P]) (*Side, P, error) {
	var side *Side
	var first, none P
	ev := &slo.Evaluator{Keep: Keep}
	for i, rp := range paths {
		o.Observe = func(r *record.Record) {
			if i > 0 {
				c := *r
				c.Point += i << 20
				r = &c
			}
			ev.Add(r)
		}
		sum, p, err := load(rp.Path, o)
		if err != nil {
			return nil, none, err
		}
		s := &Side{Name: rp.Path, Summary: sum, Eval: ev}
		if rp.Path != rp.Name {
			s.Name = "run " + rp.Name + " (" + rp.Path + ")"
		}
		s.Dirs = []string{rundir.Resolved(rp.Path)}
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
