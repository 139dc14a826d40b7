package plan

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

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

// SelectDevices are the devices of devs named in names, comma-separated
// (all of devs when names is ""); an *UnknownDeviceError names one it
// lacks.
func SelectDevices(devs []Device, names string) ([]Device, error) {
	if names == "" {
		return devs, nil
	}
	var out []Device
	for _, n := range strings.Split(names, ",") {
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

// WriteDevices writes the device catalog as a table, each figure marked
// when it is an estimate, then each figure's source.
func WriteDevices(w io.Writer, devs []Device) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tKIND\tMEMORY GiB\tUSABLE GiB\tBANDWIDTH GB/s\tBF16 TFLOPS\tFP8 TFLOPS\tINTERCONNECT GB/s")
	for _, d := range devs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Kind, sourcedNum(d.MemoryGiB), sourcedNum(d.UsableGiB),
			sourcedNum(d.BandwidthGBs), sourcedNum(d.BF16TFLOPS), sourcedNum(d.FP8TFLOPS), sourcedNum(d.InterconnectGBs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n* unsourced (an estimate). Sources:")
	for _, d := range devs {
		for _, s := range sources(d) {
			fmt.Fprintf(w, "  %s %s\n", d.Name, s)
		}
	}
	return nil
}

// sourcedNum is a figure as the catalog table shows it: "-" when unknown,
// marked "*" when unsourced.
func sourcedNum(s Sourced) string {
	if s.Value == 0 && s.Source == "" {
		return "-"
	}
	if s.Source == "" {
		return fmt.Sprintf("%g*", s.Value)
	}
	return fmt.Sprintf("%g", s.Value)
}

// sources are d's figures' sources, and its note.
func sources(d Device) []string {
	var out []string
	for _, f := range []struct {
		name string
		s    Sourced
	}{{"memory", d.MemoryGiB}, {"usable", d.UsableGiB}, {"bandwidth", d.BandwidthGBs}, {"bf16", d.BF16TFLOPS},
		{"fp8", d.FP8TFLOPS}, {"interconnect", d.InterconnectGBs}} {
		if f.s.Source != "" {
			out = append(out, f.name+": "+f.s.Source)
		}
	}
	if d.Notes != "" {
		out = append(out, "note: "+d.Notes)
	}
	return out
}
