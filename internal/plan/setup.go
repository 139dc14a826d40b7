package plan

import (
	"errors"
	"os"
	"time"
)

// Setup is what a plan is made for, as servebench plan's flags and the
// public package's Deployment name it: the model's file, the device
// catalog with a file of extra devices, the devices picked from it, and
// the engine's options.
type Setup struct {
	// Model is a Hugging Face config.json or the directory holding it
	// (safetensors headers beside it give exact parameter counts), or,
	// with GGUF, a GGUF file, of which only the header is read.
	Model string
	GGUF  bool
	// Approximate reads an architecture the planner does not know as a
	// dense decoder, with a warning.
	Approximate bool
	// DeviceFile is a YAML file of devices in the catalog's format, added
	// to the catalog ("": none).
	DeviceFile string
	// Devices name the devices to plan for; none: the whole catalog.
	Devices []string
	Options
}

// ModelError is a model file that could not be read; GGUF says which
// reader read it.
type ModelError struct {
	GGUF bool
	Err  error
}

func (e *ModelError) Error() string { return e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// Hint says what the command line's model flag takes, or how to read an
// architecture the planner does not know.
func (e *ModelError) Hint() string {
	switch {
	case e.GGUF:
		return "--gguf takes a GGUF model file; only its header is read"
	case errors.Is(e.Err, ErrArchitecture):
		return "servebench plan --approximate ... reads it as a dense decoder"
	}
	return "--config takes a Hugging Face config.json or the directory holding it"
}

// ErrArchitecture: a Hugging Face architecture the planner does not know
// (Approximate reads it as a dense decoder).
var ErrArchitecture = errors.New("unsupported architecture")

// DeviceFileError is a devices file that does not parse.
type DeviceFileError struct {
	File string
	Err  error
}

func (e *DeviceFileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *DeviceFileError) Unwrap() error { return e.Err }

// Hint and Usage point at the catalog's format.
func (e *DeviceFileError) Hint() string {
	return "servebench plan --list-devices --json shows the format"
}
func (e *DeviceFileError) Usage() bool { return true }

// ErrOneDevice: a comparison with a run is made on one device.
var ErrOneDevice = errors.New("a comparison with a run needs exactly one device")

// RunError is a run that could not be read to compare with.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Hint says what the command line's --compare takes.
func (e *RunError) Hint() string {
	return "--compare takes a run directory written by servebench run (summary.json)"
}

// LoadCatalog is the embedded catalog with the devices of file added, a
// device of the same name replacing the catalog's ("": the catalog
// alone). A file that does not parse is a *DeviceFileError.
func LoadCatalog(file string) ([]Device, error) {
	devs := Catalog()
	if file == "" {
		return devs, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if devs, err = WithDevices(devs, data); err != nil {
		return nil, &DeviceFileError{File: file, Err: err}
	}
	return devs, nil
}

// LoadModel reads the model's shape; an error is a *ModelError.
func (s *Setup) LoadModel() (*Shape, error) {
	var sh *Shape
	var err error
	if s.GGUF {
		sh, err = LoadGGUF(s.Model)
	} else {
		sh, err = LoadHFModel(s.Model, s.Approximate)
	}
	if err != nil {
		return nil, &ModelError{GGUF: s.GGUF, Err: err}
	}
	return sh, nil
}

// Load reads the catalog, then the model, and picks the devices: the
// order in which servebench plan tells what is wrong. An unknown device
// is an *UnknownDeviceError.
func (s *Setup) Load() (*Shape, []Device, error) {
	devs, err := LoadCatalog(s.DeviceFile)
	if err != nil {
		return nil, nil, err
	}
	shape, err := s.LoadModel()
	if err != nil {
		return nil, nil, err
	}
	if devs, err = SelectDevices(devs, s.Devices); err != nil {
		return nil, nil, err
	}
	return shape, devs, nil
}

// Plan plans the workload w for the model on the devices.
func (s *Setup) Plan(w Workload) (*Result, error) {
	shape, devs, err := s.Load()
	if err != nil {
		return nil, err
	}
	return Plan(shape, w, s.Options, devs)
}

// CompareRun predicts each load point of a run (a run directory or a
// summary file, ReadSummary) on the one device and sets the measurement
// beside it (Compare). warn is told of a summary rebuilt from records; a
// run that cannot be read is a *RunError, more or fewer devices than one
// ErrOneDevice.
func (s *Setup) CompareRun(run string, warn func(string)) (*Comparison, error) {
	shape, devs, err := s.Load()
	if err != nil {
		return nil, err
	}
	if len(devs) != 1 {
		return nil, ErrOneDevice
	}
	sum, err := ReadSummary(run, warn)
	if err != nil {
		return nil, &RunError{Err: err}
	}
	return Compare(shape, s.Options, &devs[0], sum)
}

// Tuning is an Efficiency with its times as durations, as servebench
// plan's flags and the public package take them; negative Compute,
// StepOverhead and RequestOverhead are the engine's defaults. The public
// PlanEfficiency converts to it and back, so the two keep one layout.
type Tuning struct {
	Compute, Bandwidth, Interconnect                float64
	AllReduceLatency, StepOverhead, RequestOverhead time.Duration
}

// DefaultTuning is DefaultEfficiency with its times as durations.
func DefaultTuning() Tuning {
	e := DefaultEfficiency()
	return Tuning{Compute: e.Compute, Bandwidth: e.Bandwidth, Interconnect: e.Interconnect,
		AllReduceLatency: time.Duration(e.AllReduceLatency * float64(time.Second)), StepOverhead: -1, RequestOverhead: -1}
}

// Efficiency is t with its times in seconds.
func (t Tuning) Efficiency() Efficiency {
	return Efficiency{Compute: t.Compute, Bandwidth: t.Bandwidth, Interconnect: t.Interconnect,
		AllReduceLatency: t.AllReduceLatency.Seconds(), StepOverhead: t.StepOverhead.Seconds(), RequestOverhead: t.RequestOverhead.Seconds()}
}
