package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/servebench/servebench/internal/plan"
)

// Plan renders a capacity plan for people; docs/PLANNER.md defines each
// field.
func Plan(w io.Writer, r *plan.Result) error {
	ew := &errWriter{w: w}
	writeModel(ew, r)
	if b := firstBudget(r); b != nil {
		writeBudget(ew, b, r.Model.KVBytesPerToken)
	}
	writeDevices(ew, r)
	writeRoofline(ew, r)
	writeNotes(ew, r)
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func writeModel(w *errWriter, r *plan.Result) {
	m, wl := r.Model, r.Workload
	w.printf("Model      %s: %s, %s\n", m.Name, m.Arch, m.Family)
	attn := fmt.Sprintf("%d KV heads x %d", m.KVHeads, m.HeadDim)
	if m.KVLatent > 0 {
		attn = fmt.Sprintf("a %d-wide latent KV", m.KVLatent)
	}
	w.printf("           %d layers, hidden %d, %d heads, %s; max context %s\n",
		m.Layers, m.Hidden, m.Heads, attn, plan.FormatInt(int64(m.MaxContext)))
	active := ""
	if m.ActiveParams != m.Params {
		active = fmt.Sprintf(", %s active per token", plan.FormatCount(m.ActiveParams))
	}
	w.printf("Params     %s%s (%s)\n", plan.FormatCount(m.Params), active, m.ParamsSource)
	w.printf("Weights    %s, %.4g bits/weight: %s (%s)\n", m.WeightFormat, m.BitsPerWeight, plan.FormatBytes(m.WeightBytes), m.WeightBasis)
	w.printf("KV cache   %s: %s B/token = %s\n", m.KVType, plan.FormatInt(m.KVBytesPerToken), m.KVFormula)
	if m.StateBytes > 0 {
		w.printf("State      %s per sequence (recurrent layers)\n", plan.FormatBytes(m.StateBytes))
	}
	w.printf("Engine     %s, %s\n", r.Engine.Name, r.Engine.Layout)
	users := "users"
	if wl.Concurrency == 1 {
		users = "user"
	}
	w.printf("Workload   %d %s, %s prompt + %s output tokens, %s-token context\n", wl.Concurrency, users,
		plan.FormatInt(int64(wl.PromptTokens)), plan.FormatInt(int64(wl.OutputTokens)), plan.FormatInt(int64(wl.Context)))
	if wl.TTFT > 0 || wl.MinTPS > 0 {
		w.printf("Objective  %s\n", planObjective(wl))
	}
	if r.Needs.AggregateTPS > 0 {
		w.printf("Needs      %.1f output tok/s in all; %s of decode per request\n", r.Needs.AggregateTPS, plan.FormatSeconds(r.Needs.DecodeSeconds))
	}
}

func planObjective(wl plan.Workload) string {
	var parts []string
	if wl.TTFT > 0 {
		parts = append(parts, "TTFT p95 <= "+plan.FormatSeconds(wl.TTFT))
	}
	if wl.MinTPS > 0 {
		parts = append(parts, fmt.Sprintf(">= %.1f tok/s per user", wl.MinTPS))
	}
	return strings.Join(parts, ", ")
}

func firstBudget(r *plan.Result) *plan.DeviceResult {
	for i := range r.Devices {
		if r.Devices[i].Supported {
			return &r.Devices[i]
		}
	}
	return nil
}

func writeBudget(w *errWriter, d *plan.DeviceResult, perToken int64) {
	b := d.Budget
	w.printf("\nMemory per device (as on %s)\n", d.Device)
	row := func(name string, n int64, basis string) {
		w.printf("%s\n", strings.TrimRight(fmt.Sprintf("  %-13s %10s  %s", name, plan.FormatBytes(n), basis), " "))
	}
	share := "all of the weights"
	if b.GPUs > 1 {
		share = fmt.Sprintf("1/%d of the weights", b.GPUs)
	}
	row("weights", b.Weights, share)
	row("KV cache", b.KV, fmt.Sprintf("%s; %s B/token on this device", b.KVNote, plan.FormatInt(b.KVPerToken)))
	if b.State > 0 {
		row("state", b.State, "recurrent state of every sequence")
	}
	row("activations", b.Activation, b.ActivationBasis)
	row("runtime", b.Runtime, b.RuntimeBasis)
	row(fmt.Sprintf("headroom %.0f%%", b.HeadroomPct), b.Headroom, "kept free: total x headroom")
	row("total", b.Total, "")
}

func writeDevices(w *errWriter, r *plan.Result) {
	w.printf("\nDevices (%d sequences x %s tokens)\n", r.Engine.Slots, plan.FormatInt(r.Needs.ContextTokens))
	tw := tabwriter.NewWriter(w.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  DEVICE\tUSABLE\tNEEDS\tFITS\tMAX SEQS\tMAX CTX\tTTFT p50\tTTFT p95\tTTFT BURST\tTOK/S/USER\tTOK/S\tE2E\tVERDICT\tBOTTLENECK")
	for _, d := range r.Devices {
		if !d.Supported {
			fmt.Fprintf(tw, "  %s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\t-\n", d.Device, usable(d), d.Verdict)
			continue
		}
		p := d.Perf
		if p.Batch == 0 {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t0\t0\t-\t-\t-\t-\t-\t-\t%s\t%s\n", d.Device, usable(d), plan.FormatBytes(d.Budget.Total), yesNo(d.Fits), d.Verdict, d.Bottleneck)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\n", d.Device, usable(d), plan.FormatBytes(d.Budget.Total),
			yesNo(d.Fits), plan.FormatInt(d.MaxSeqs), maxCtx(d.MaxContext, r.Model.MaxContext), plan.FormatSeconds(p.TTFTP50S), plan.FormatSeconds(p.TTFTP95S),
			plan.FormatSeconds(p.TTFTBurstS), p.DecodeTPS, p.AggregateTPS, plan.FormatSeconds(p.E2ES), d.Verdict, d.Bottleneck)
	}
	if w.err == nil {
		w.err = tw.Flush()
	}
}

func maxCtx(n int64, model int) string {
	if n > 0 && n == int64(model) {
		return plan.FormatInt(n) + " (model max)"
	}
	return plan.FormatInt(n)
}

func usable(d plan.DeviceResult) string {
	for _, u := range d.Unsourced {
		if u == "usable_gib" || u == "memory_gib" {
			return plan.FormatBytes(d.Usable) + "*"
		}
	}
	return plan.FormatBytes(d.Usable)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func writeRoofline(w *errWriter, r *plan.Result) {
	w.printf("\nRoofline (prefill of one prompt; decode step at the batch shown)\n")
	tw := tabwriter.NewWriter(w.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  DEVICE\tPREFILL\tBOUND\tBATCH\tSTEP\tMEMORY\tCOMPUTE\tLINK\tHOST\tBOUND\tCOMPUTE-BOUND AT")
	for _, d := range r.Devices {
		if !d.Supported || d.Perf.Batch == 0 {
			continue
		}
		p, t := d.Perf, d.Perf.Step
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Device, plan.FormatSeconds(p.PrefillS), p.PrefillBound, p.Batch,
			plan.FormatSeconds(p.StepS), plan.FormatSeconds(t.Memory), plan.FormatSeconds(t.Compute), plan.FormatSeconds(t.Comm), plan.FormatSeconds(t.Overhead),
			p.DecodeBound, crossover(p.Crossover, p.CrossoverShort))
	}
	if w.err == nil {
		w.err = tw.Flush()
	}
}

func crossover(b, short int64) string {
	switch {
	case b > 0:
		return fmt.Sprintf("batch %s", plan.FormatInt(b))
	case short > 0:
		return fmt.Sprintf("never at this context; batch %s at short contexts", plan.FormatInt(short))
	}
	return "never"
}

func writeNotes(w *errWriter, r *plan.Result) {
	var notes []string
	for _, d := range r.Devices {
		if len(d.Reasons) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s", d.Device, strings.Join(d.Reasons, "; ")))
		}
		if d.MinGPUs > 0 {
			notes = append(notes, fmt.Sprintf("%s: fits on %d GPUs", d.Device, d.MinGPUs))
		}
	}
	var unsourced []string
	for _, d := range r.Devices {
		if len(d.Unsourced) > 0 {
			unsourced = append(unsourced, fmt.Sprintf("%s (%s)", d.Device, strings.Join(d.Unsourced, ", ")))
		}
	}
	if len(unsourced) > 0 {
		notes = append(notes, "unsourced catalog numbers (estimates; * on usable memory): "+strings.Join(unsourced, "; "))
	}
	notes = append(notes, r.Warnings...)
	notes = append(notes, fmt.Sprintf("assumptions: compute efficiency %s, bandwidth efficiency %.2f, interconnect efficiency %.2f, all-reduce latency %s, host overhead %s per pass, request overhead %s (API server, template, tokenization, first chunk)",
		fmtComputeEff(r.Assumptions), r.Assumptions.Bandwidth, r.Assumptions.Interconnect, plan.FormatSeconds(r.Assumptions.AllReduceLatency), plan.FormatSeconds(r.Assumptions.StepOverhead), plan.FormatSeconds(r.Assumptions.RequestOverhead)))
	w.printf("\nNotes\n")
	for _, n := range notes {
		w.printf("  - %s\n", n)
	}
}

// fmtComputeEff names the engine's own efficiency on FP16-accumulate
// tensor cores beside the common one when the plan used it.
func fmtComputeEff(e plan.Efficiency) string {
	if e.ComputeFP16Acc > 0 {
		return fmt.Sprintf("%.2f (%.2f on NVIDIA FP16-accumulate tensor cores)", e.Compute, e.ComputeFP16Acc)
	}
	return fmt.Sprintf("%.2f", e.Compute)
}
