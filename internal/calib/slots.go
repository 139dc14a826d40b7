package calib

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/stats"
)

// Where a slot count came from (Fit.SlotsSource).
const (
	SlotsFlag      = "given"     // --slots
	SlotsServer    = "server"    // the server's description of itself in run.json
	SlotsRun       = "run"       // the most requests generating at once, below the load
	SlotsUnbounded = "unbounded" // the run never filled them: no limit is assumed
)

// serverSlotKeys are the keys of run.json's target.server that state a
// slot count: the simulator's max_num_seqs, llama.cpp's total_slots.
var serverSlotKeys = []record.ServerKey{record.ServerMaxNumSeqs, record.ServerSlots}

// slots finds the slot count: as given, as the server states it, or from
// the run when at its highest concurrency fewer requests generated at once
// than were in flight. Otherwise the run did not reach a limit.
func slots(reqs []request, server map[record.ServerKey]string, given int) (int, string) {
	if given > 0 {
		return given, SlotsFlag
	}
	for _, k := range serverSlotKeys {
		if n, err := strconv.Atoi(server[k]); err == nil && n > 0 {
			return n, SlotsServer
		}
	}
	top := 0
	for _, r := range reqs {
		top = max(top, r.concurrency)
	}
	var atTop []request
	for _, r := range reqs {
		if r.concurrency == top {
			atTop = append(atTop, r)
		}
	}
	if peak := peakGenerating(atTop); top > 0 && peak < top {
		return peak, SlotsRun
	}
	return 0, SlotsUnbounded
}

// overheadIn is where the server spends a request's overhead: in a slot
// for Ollama, whose front server takes one of its runner's slots before it
// forwards the request; before the queue otherwise (vLLM, the simulator).
func overheadIn(server map[record.ServerKey]string) string {
	if server[record.ServerRuntime] == "ollama" {
		return sim.OverheadInSlot
	}
	return sim.OverheadInQueue
}

// residuals compares the fitted step with the measured gaps.
func residuals(gaps []gap, reqs []request, lone []int, m Model) Residuals {
	var r Residuals
	type acc struct{ n, meas, fit float64 }
	by := map[int]*acc{}
	var ss, sum float64
	abs := make([]float64, 0, len(gaps))
	for _, g := range gaps {
		f := m.StepMSFor(g.seqs, g.tokens, g.kv)
		ss += (g.ms - f) * (g.ms - f)
		abs = append(abs, math.Abs(g.ms-f))
		sum += g.ms
		a := by[int(g.seqs)]
		if a == nil {
			a = &acc{}
			by[int(g.seqs)] = a
		}
		a.n++
		a.meas += g.ms
		a.fit += f
	}
	r.RMSMS, r.MeanMS = math.Sqrt(ss/float64(len(gaps))), sum/float64(len(gaps))
	slices.Sort(abs)
	r.SpreadMS = 1.4826 * stats.Quantile(abs, 0.5)
	for s, a := range by {
		r.BySeqs = append(r.BySeqs, SeqsResidual{Seqs: s, Gaps: int(a.n), Measured: a.meas / a.n, Fitted: a.fit / a.n})
	}
	slices.SortFunc(r.BySeqs, func(a, b SeqsResidual) int { return a.Seqs - b.Seqs })
	var tss float64
	for _, i := range lone {
		d := reqs[i].ttft() - loneStep(m, reqs[i]) - m.RequestOverheadMS
		tss += d * d
	}
	if len(lone) > 0 {
		r.TTFTRMS = math.Sqrt(tss / float64(len(lone)))
	}
	return r
}

// warnings say what the run could not determine.
func warnings(f *Fit, reqs []request) []string {
	var w []string
	if f.LoneRequests == 0 {
		w = append(w, "no request was sent with nothing else in flight: the per-request overhead is taken as 0; include concurrency 1 in the run")
	}
	if f.SlotsSource == SlotsUnbounded {
		top := 0
		for _, r := range reqs {
			top = max(top, r.concurrency)
		}
		w = append(w, fmt.Sprintf("the run never filled the server's slots (all %d requests generated at once at its highest load): predictions assume no slot limit; give --slots N if the server has one", top))
	}
	prompts := map[int]bool{}
	for _, r := range reqs {
		prompts[r.prompt] = true
	}
	if len(prompts) == 1 {
		w = append(w, "every prompt had the same length: prefill cost per token rests on steps shared with decodes; predictions for other prompt lengths extrapolate it")
	}
	if names := unstable(f.Params); len(names) > 0 {
		w = append(w, fmt.Sprintf("%s: the estimate lay outside its bootstrap interval, widened to include it; this run does not pin it down (more requests, or more concurrency levels and prompt lengths, would)", strings.Join(names, ", ")))
	}
	return w
}
