package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/servebench/servebench/internal/plan"
)

// Devices writes the device catalog as a table, each figure marked
// when it is an estimate, then each figure's source.
func Devices(w io.Writer, devs []plan.Device) error {
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
func sourcedNum(s plan.Sourced) string {
	if s.Value == 0 && s.Source == "" {
		return "-"
	}
	if s.Source == "" {
		return fmt.Sprintf("%g*", s.Value)
	}
	return fmt.Sprintf("%g", s.Value)
}

// sources are d's figures' sources, and its note.
func sources(d plan.Device) []string {
	var out []string
	for _, f := range []struct {
		name string
		s    plan.Sourced
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

// DevicesJSON writes a device catalog as plan --list-devices --json
// prints it: the catalog file's format, each number with its source.
func DevicesJSON(w io.Writer, devs []plan.Device) error {
	return writeJSON(w, map[string]any{"devices": devs}, true)
}
