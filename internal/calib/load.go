package calib

import (
	"io"

	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/rundir"
)

// Sources are the runs a calibration reads, as servebench calibrate and
// servebench sim --calibrate name them.
type Sources struct {
	// Dir is the run fitted to; Against, when not "", a run of the same
	// server to check the fit against (HeldOut).
	Dir, Against string
	// Only are the concurrencies fitted to; nil: every point.
	Only ConcSet
	// In is read for a run named "-"; Read are the options every run is
	// read under.
	In   io.Reader
	Read rundir.Options
}

// ReadError is a run that could not be read; Against says it is the
// held-out one.
type ReadError struct {
	Against bool
	Err     error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Load reads the runs and fits the model to Dir's under o (Calibrate).
// The held-out run, nil without Against, is read first, so that a wrong
// path is told before the fit; when it is Dir, it goes by Dir's name and
// holds the points the fit does not read (NewHeldOut).
func Load(src Sources, o Options) (*Calibration, *HeldOut, error) {
	var held *HeldOut
	if src.Against != "" {
		run, err := ReadRun(src.Against, src.In, src.Read)
		if err != nil {
			return nil, nil, &ReadError{Against: true, Err: err}
		}
		same := rundir.Same(src.Against, src.Dir)
		if same {
			run.Dir = src.Dir
		}
		if held, err = NewHeldOut(run, same, src.Only); err != nil {
			return nil, nil, err
		}
	}
	run, err := ReadRun(src.Dir, src.In, src.Read)
	if err != nil {
		return nil, nil, &ReadError{Err: err}
	}
	c, err := Calibrate(run, src.Only, o)
	if err != nil {
		return nil, nil, err
	}
	return c, held, nil
}

// FitDevice fits the shared roofline model of s's model on its one
// device to the run, into f.Shared (FitShared): the efficiencies and
// overheads the fit implies there. The model and device are read as
// s.Load reads them, and fail as it does.
func (f *Fit) FitDevice(s *plan.Setup, o Options) error {
	shape, devs, err := s.Load()
	if err != nil {
		return err
	}
	if len(devs) != 1 {
		return plan.ErrOneDevice
	}
	peak, err := plan.PeakModel(shape, s.Options, devs[0])
	if err != nil {
		return err
	}
	if f.Shared, err = f.FitShared(peak, o); err != nil {
		return err
	}
	f.Shared.Model, f.Shared.Device = shape.Name, devs[0].Name
	return nil
}
