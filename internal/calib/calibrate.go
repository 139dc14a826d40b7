package calib

import (
	"fmt"
	"maps"
	"slices"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// Run is a measured run as a calibration reads it: the name it goes by
// (its directory), its summary and its records.
type Run struct {
	Dir     string
	Summary *metrics.Summary
	Records []*record.Record
}

// Calibration is a fit with the run it came from.
type Calibration struct {
	Run  Run     // the points fitted to
	Only ConcSet // the concurrencies fitted to (--fit-concurrency); nil: all
	Fit  *Fit
}

// Calibrate fits the model to run: to its closed-loop points at the
// concurrencies of only, or to the whole run when only is nil. A
// concurrency the run did not measure is ErrNotMeasured; too little to
// fit, ErrTooFew.
func Calibrate(run Run, only ConcSet, o Options) (*Calibration, error) {
	if only != nil {
		if err := only.missing(run); err != nil {
			return nil, err
		}
		run = only.part(run, true)
	}
	var server map[record.ServerKey]string
	if run.Summary.Run != nil {
		server = run.Summary.Run.Target.Server
	}
	fit, err := Records(run.Records, server, o)
	if err != nil {
		return nil, err
	}
	return &Calibration{Run: run, Only: only, Fit: fit}, nil
}

// HeldOut is a run of the same server that a fit is checked against.
type HeldOut struct {
	Run
	// SameRun: the run the fit read, whose points are those the fit did
	// not read, or all of them when it read every one.
	SameRun bool
}

// NewHeldOut is the held-out run: run itself, or, when it is the run the
// fit reads (sameRun), the points the fit does not read (only); with every
// point fitted the run is its own check, not held out, and the report says
// so. A list that leaves no point out is ErrNoneHeldOut.
func NewHeldOut(run Run, sameRun bool, only ConcSet) (*HeldOut, error) {
	h := &HeldOut{Run: run, SameRun: sameRun}
	if !sameRun || only == nil {
		return h, nil
	}
	if err := only.missing(run); err != nil {
		return nil, err
	}
	h.Run = only.part(run, false)
	if len(ownPoints(h.Summary)) == 0 {
		return nil, &InputError{Kind: ErrNoneHeldOut, Msg: fmt.Sprintf("--fit-concurrency %s takes every closed-loop point of %s: none is left to hold out", only, run.Dir)}
	}
	return h, nil
}

// Report predicts the run's own points, a held-out run's (against, when
// not nil) and pts, each through the simulator with the fit.
func (c *Calibration) Report(pts []Point, against *HeldOut) (*Report, error) {
	cfg := c.Fit.SimConfig()
	rep := &Report{Schema: Schema, Run: c.Run.Dir, Fit: c.Fit}
	if c.Only != nil {
		rep.FitConcurrency = slices.Sorted(maps.Keys(c.Only))
	}
	var err error
	if rep.Measured, err = comparePoints(cfg, c.Run.Summary); err != nil {
		return nil, err
	}
	if against != nil {
		rep.AgainstRun = against.Dir
		if rep.Against, err = comparePoints(cfg, against.Summary); err != nil {
			return nil, err
		}
		rep.AgainstRepeats = repeatedLoads(rep.Against)
		rep.AgainstSteps = c.Fit.StepChanges(against.Records)
		rep.Warnings = DriftWarnings(rep.AgainstSteps, against.Dir, against.SameRun)
		if against.SameRun && c.Only == nil { // every point fitted: none held out
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("--against %s is the run the fit read: its points are not held out, and matching them says only that the model reproduces its own data; give --fit-concurrency (e.g. %s) to fit to some points and hold out the others", against.Dir, FitExample(c.Run.Summary)))
		}
	}
	if rep.Predictions, err = Predict(cfg, pts); err != nil {
		return nil, err
	}
	return rep, nil
}
