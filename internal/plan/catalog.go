package plan

import (
	"fmt"
	"os"
	"strings"

	"github.com/servebench/servebench/internal/rundir"
)

// WithDevices is devs with the devices of a catalog file's data added; a
// device of the same name as one in devs replaces it.
func WithDevices(devs []Device, data []byte) ([]Device, error) {
	extra, err := ParseDevices(data)
	if err != nil {
		return nil, err
	}
	for _, d := range extra {
		if old, ok := FindDevice(devs, d.Name); ok {
			*old = d
		} else {
			devs = append(devs, d)
		}
	}
	return devs, nil
}

// UnknownDeviceError: a device name that devs lack.
type UnknownDeviceError struct {
	Name  string
	Known []string
}

func (e *UnknownDeviceError) Error() string {
	return fmt.Sprintf("unknown device %q (known: %s)", e.Name, strings.Join(e.Known, ", "))
}

// Hint and Usage say what the command line should do: name a known device.
func (e *UnknownDeviceError) Hint() string { return "servebench plan --gpu " + e.Known[0] }
func (e *UnknownDeviceError) Usage() bool  { return true }

// SelectDevices are the devices of devs named in names, each trimmed of
// spaces (all of devs when names is empty); an *UnknownDeviceError names
// one it lacks.
func SelectDevices(devs []Device, names []string) ([]Device, error) {
	if len(names) == 0 {
		return devs, nil
	}
	var out []Device
	for _, n := range names {
		d, ok := FindDevice(devs, strings.TrimSpace(n))
		if !ok {
			e := &UnknownDeviceError{Name: n}
			for _, d := range devs {
				e.Known = append(e.Known, d.Name)
			}
			return nil, e
		}
		out = append(out, *d)
	}
	return out, nil
}

// ReadSummary reads the summary of a measured run to compare with: a run
// directory's summary.json, rebuilt from its records when the run left none
// or a damaged one, as every reader of a run directory does (which warn is
// told); or a summary file given directly.
func ReadSummary(path string, warn func(string)) (*Summary, error) {
	var b []byte
	var err error
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		var rebuilt bool
		if b, rebuilt, err = rundir.SummaryJSON(path, rundir.Options{Warn: warn}); rebuilt {
			warn(fmt.Sprintf("%s has no whole %s (the run was killed): compared with the summary rebuilt from its records", path, rundir.SummaryFile))
		}
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	return ParseSummary(b)
}
