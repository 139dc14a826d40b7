package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// InstanceNVML is the Instance of every sample the local NVML source takes.
const InstanceNVML = "nvml"

// errNotSupported is a reading the GPU or driver does not offer (an
// energy counter before Volta, clock reasons on some boards): the field
// is absent, silently, and no failure.
var errNotSupported = errors.New("not supported")

// nvmlLib is the part of NVML the source uses, so that tests script the
// readings (nvml_cgo.go binds it to the driver's library).
type nvmlLib interface {
	Devices() []nvmlDevice
	// DriverVersion is the driver's version ("550.54.15"), "" when NVML
	// does not say.
	DriverVersion() string
	// PollXid returns the Xid errors raised since the last call, without
	// waiting for one.
	PollXid() ([]xidError, error)
	Close() error
}

// nvmlDevice is one GPU. Its identity is read once, when NVML is opened.
type nvmlDevice interface {
	Identity() (index int, name, uuid string)
	Memory() (used, total uint64, err error) // bytes
	Utilization() (percent uint32, err error)
	PowerMW() (uint32, error)
	EnergyMJ() (uint64, error) // cumulative since the driver loaded
	TemperatureC() (uint32, error)
	SMClockMHz() (uint32, error)
	ClockReasons() (uint64, error) // nvmlClocksEventReason* bits
}

type xidError struct {
	Index int
	Xid   uint64
}

// nvmlSource samples every local GPU through NVML.
type nvmlSource struct {
	lib    nvmlLib
	devs   []nvmlDevice
	driver string // read once: it cannot change while NVML is open
	// limits holds each GPU's limiting clock reasons at its last reading,
	// so that a throttle event marks when throttling begins.
	limits map[int][]string
}

// NewNVML opens NVML and returns the source of every local GPU, or an
// error whose text says in one line why there is none (no driver, no
// GPU, a build without cgo); the caller prints it and runs on without.
func NewNVML() (Source, error) {
	lib, err := openNVML()
	if err != nil {
		return nil, err
	}
	return newNVMLSource(lib)
}

func newNVMLSource(lib nvmlLib) (*nvmlSource, error) {
	devs := lib.Devices()
	if len(devs) == 0 {
		lib.Close()
		return nil, errors.New("NVML found no GPU")
	}
	return &nvmlSource{lib: lib, devs: devs, driver: lib.DriverVersion(), limits: map[int][]string{}}, nil
}

func (s *nvmlSource) Name() string { return fmt.Sprintf("%d local GPU(s) through NVML", len(s.devs)) }

// Close releases NVML.
func (s *nvmlSource) Close() error { return s.lib.Close() }

// Read takes one reading of every GPU, a throttle event for each GPU whose
// clocks began to be limited, and an event per Xid raised since the last
// read. A field a GPU cannot give is absent; a field that failed (not
// merely unsupported) is absent too and named in the error, which comes
// back with the samples that were read.
func (s *nvmlSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	var out []Sample
	var errs []error
	for _, d := range s.devs {
		g, err := readGPU(d)
		g.Driver = s.driver
		errs = append(errs, err)
		out = append(out, Sample{TNS: now, Source: KindGPU, Instance: InstanceNVML, GPU: g})
		if ev := s.throttleEvent(g); ev != nil {
			out = append(out, eventSample(now, ev))
		}
	}
	xids, err := s.lib.PollXid()
	if err != nil {
		errs = append(errs, fmt.Errorf("polling for Xid events: %w", err))
	}
	for _, x := range xids {
		out = append(out, eventSample(now, xidEvent(InstanceNVML, x.Index, x.Xid)))
	}
	return out, errors.Join(errs...)
}

func eventSample(now int64, ev *Event) Sample {
	return Sample{TNS: now, Source: KindEvent, Instance: ev.Source, Event: ev}
}

// throttleEvent notes g's limiting reasons and returns an event when one
// became active since the GPU's last reading.
func (s *nvmlSource) throttleEvent(g *GPU) *Event {
	if g.Throttle == nil {
		return nil // unknown this time: keep the last state
	}
	began := throttleBegins(s.limits[g.Index], g.Throttle)
	s.limits[g.Index] = limitingReasons(g.Throttle)
	if len(began) == 0 {
		return nil
	}
	return &Event{Kind: EventThrottle, Source: InstanceNVML,
		Detail: fmt.Sprintf("GPU %d: %s", g.Index, strings.Join(began, ", "))}
}

// readGPU takes one reading of d, converting NVML's units: mW to W, mJ to
// J, percent to a fraction.
func readGPU(d nvmlDevice) (*GPU, error) {
	index, name, uuid := d.Identity()
	g := &GPU{Index: index, Name: name, UUID: uuid}
	var r fieldReader
	if used, total, err := d.Memory(); r.ok("memory", err) {
		g.MemoryUsedBytes, g.MemoryTotalBytes = new(float64(used)), new(float64(total))
	}
	if pct, err := d.Utilization(); r.ok("utilisation", err) {
		g.Utilization = new(float64(pct) / 100)
	}
	if mw, err := d.PowerMW(); r.ok("power", err) {
		g.PowerW = new(float64(mw) / 1000)
	}
	if mj, err := d.EnergyMJ(); r.ok("energy", err) {
		g.EnergyJ = new(float64(mj) / 1000)
	}
	if c, err := d.TemperatureC(); r.ok("temperature", err) {
		g.TemperatureC = new(float64(c))
	}
	if mhz, err := d.SMClockMHz(); r.ok("SM clock", err) {
		g.SMClockMHz = new(float64(mhz))
	}
	if mask, err := d.ClockReasons(); r.ok("clock reasons", err) {
		g.Throttle = clockReasonNames(mask)
	}
	if len(r.failed) > 0 {
		return g, fmt.Errorf("GPU %d: %s", index, strings.Join(r.failed, "; "))
	}
	return g, nil
}

// fieldReader collects the fields of one reading that failed.
type fieldReader struct{ failed []string }

// ok says whether the field was read; an unsupported field is skipped
// silently, any other failure is remembered for the error.
func (r *fieldReader) ok(field string, err error) bool {
	if err != nil && !errors.Is(err, errNotSupported) {
		r.failed = append(r.failed, field+": "+err.Error())
	}
	return err == nil
}
