package compare

import (
	"path/filepath"
	"slices"
	"sync"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// RunPath is one run of a side: as the user named it, and its path (a run
// directory or records file).
type RunPath struct{ Name, Path string }

// LoadOptions say how the sides' runs are read.
type LoadOptions struct {
	// Read is how each run is read (rundir.Summarize); its Observe and
	// Samples are the loader's own. Its Warn receives each side's warnings,
	// side A's first.
	Read rundir.Options
	// Page reads each side as report --format html reads a run, charts
	// and all, for a page (one run a side).
	Page bool
}

// LoadSides reads both sides at once, each on a core of its own; the
// warnings reading each says are held and given A first. pages are the
// sides' pages with o.Page (else empty). An error is the first side's to
// fail, after the warnings of the sides before it.
func LoadSides(paths [2][]RunPath, o LoadOptions) (sides [2]*Side, pages [2]report.HTMLRun, err error) {
	var errs [2]error
	var held [2][]string
	var wg sync.WaitGroup
	for i := range sides {
		ro := o.Read
		ro.Warn = func(w string) { held[i] = append(held[i], w) }
		wg.Go(func() { sides[i], pages[i], errs[i] = loadSide(paths[i], ro, o.Page) })
	}
	wg.Wait()
	for i := range sides {
		if o.Read.Warn != nil {
			for _, w := range held[i] {
				o.Read.Warn(w)
			}
		}
		if errs[i] != nil {
			return sides, pages, errs[i]
		}
	}
	return sides, pages, nil
}

// loadSide reads one side's runs, whose records are pooled as repeats are
// (each run its own point, so the intervals resample runs).
func loadSide(paths []RunPath, o rundir.Options, page bool) (*Side, report.HTMLRun, error) {
	var side *Side
	var first report.HTMLRun
	ev := &slo.Evaluator{}
	for i, rp := range paths {
		s, p, err := loadRun(rp.Path, o, page, ev, i)
		if err != nil {
			return nil, report.HTMLRun{}, err
		}
		if rp.Path != rp.Name {
			s.Name = "run " + rp.Name + " (" + rp.Path + ")"
		}
		s.Dirs = []string{resolved(rp.Path)}
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

// resolved is a path made absolute with its links followed, so that two
// names of one directory compare equal; as given when that fails.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// loadRun reads one run as report reads it: its summary recomputed from
// its records, and the same records by load for the intervals; for a
// page, as report --format html reads it, charts and all. The side's n-th
// run is its own point n<<20 on, so that its points are other repeats
// than its first run's.
func loadRun(path string, o rundir.Options, page bool, ev *slo.Evaluator, run int) (*Side, report.HTMLRun, error) {
	if page {
		r, _, err := report.LoadRun(path, nil, o, nil, ev)
		return &Side{Name: path, Summary: r.Summary, Eval: ev}, r, err
	}
	o.Observe = func(r *record.Record) {
		if run > 0 {
			c := *r
			c.Point += run << 20
			r = &c
		}
		ev.Add(r)
	}
	s, err := rundir.Summarize(path, nil, o)
	if err != nil {
		return nil, report.HTMLRun{}, err
	}
	return &Side{Name: path, Summary: s, Eval: ev}, report.HTMLRun{}, nil
}
