package enginecheck

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Render writes one line per load point, then the warnings of reading the
// runs, then every problem, then the verdict as the last line.
func Render(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tAPI\tLOAD\tREQUESTS\tNATIVE\tDECODE CLIENT\tDECODE SERVER\tRESULT")
	for _, g := range r.Groups {
		verdict := "ok"
		if len(g.Problems) > 0 {
			verdict = fmt.Sprintf("FAIL (%d)", len(g.Problems))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d (%d measured)\t%v\t%s\t%s\t%s\n", g.Dir, g.API, loadName(g),
			len(g.Records), g.Measured, g.Native, speed(g.ClientDecode), speed(g.ServerDecode), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	n := len(r.Problems)
	for _, g := range r.Groups {
		for _, p := range g.Problems {
			fmt.Fprintf(w, "FAIL %s %s %s: %s\n", g.Dir, g.API, loadName(g), p)
		}
		n += len(g.Problems)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "FAIL %s\n", p)
	}
	if n > 0 {
		_, err := fmt.Fprintf(w, "enginecheck: FAIL, %d problems\n", n)
		return err
	}
	_, err := fmt.Fprintf(w, "enginecheck: ok, %d load points\n", len(r.Groups))
	return err
}

func loadName(g *Group) string {
	switch {
	case g.Load.Concurrency > 0:
		return fmt.Sprintf("c=%d", g.Load.Concurrency)
	case g.Load.Rate > 0:
		return fmt.Sprintf("rate=%g", g.Load.Rate)
	}
	return fmt.Sprintf("point %d", g.Point)
}

func speed(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f tok/s", x)
}
