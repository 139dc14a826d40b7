package calib

import (
	"cmp"
	"slices"

	"github.com/servebench/servebench/internal/record"
)

// request is one successful measured request on the run's model-time clock
// (ms since the run's epoch).
type request struct {
	point          int
	concurrency    int
	sent, first    float64
	end            float64
	prompt, output int
	// warmup requests are not measured: they give no gaps and no lone
	// TTFT (a cold start), but they hold a slot and run in the steps.
	warmup bool
	// at and tokens are its content chunks: when each arrived and how many
	// tokens it carried.
	at     []float64
	tokens []int
}

// ttft is the request's time to first token, ms.
func (r *request) ttft() float64 { return r.first - r.sent }

// requestOf turns a record into a request; ok is false for a failed or
// tokenless one, or one without chunk timings.
func requestOf(r *record.Record) (request, bool) {
	if !r.OK() || r.FirstTokenNS == 0 || len(r.Chunks) < 2 || r.OutputTokens < 2 {
		return request{}, false
	}
	q := request{point: r.Point, concurrency: r.Load.Concurrency, sent: ms(r.SentNS), first: ms(r.FirstTokenNS),
		end: ms(r.EndNS), prompt: r.PromptTokens, output: r.OutputTokens, warmup: r.Phase == record.PhaseWarmup}
	for _, c := range r.Chunks {
		q.at = append(q.at, ms(r.SentNS+c.AtNS))
		q.tokens = append(q.tokens, max(c.Tokens, 1))
	}
	return q, true
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// gap is one observed engine step: a request's wait for its next chunk,
// per token, with what the engine was doing at the time as the client saw
// it. Steps end when their tokens are delivered, so every stream's chunks
// mark the same step ends.
type gap struct {
	req int     // index of the request it belongs to (the bootstrap resamples requests)
	ms  float64 // the gap per token
	at  float64 // when it ended, ms on the run's clock
	// seqs is the requests generating through this step plus those whose
	// first token ended it (prefilled in it); tokens is one per decoding
	// request plus the prefilled prompts; kv is the KV entries the step
	// read and wrote: each decoding request's context, each prompt.
	seqs, tokens, kv float64
	// parts are the sequences of the step, for a model that costs each
	// (the shared roofline with --config).
	parts []part
}

// part is one sequence's work in a step: q tokens after cached ones.
type part struct {
	cached, q int64
	decode    bool
}

// observe derives every inter-chunk gap of every request with the engine
// state at its end.
func observe(reqs []request) []gap {
	byFirst := make([]int, len(reqs))
	for i := range byFirst {
		byFirst[i] = i
	}
	slices.SortFunc(byFirst, func(a, b int) int { return cmp.Compare(reqs[a].first, reqs[b].first) })
	var gaps []gap
	for i := range reqs {
		r := &reqs[i]
		if r.warmup {
			continue
		}
		for j := 1; j < len(r.at); j++ {
			g := (r.at[j] - r.at[j-1]) / float64(r.tokens[j])
			if !(g > 0) {
				continue
			}
			gaps = append(gaps, stateAt(reqs, byFirst, i, r.at[j], g))
		}
	}
	return gaps
}

// stateAt is the engine state of the step ending at t, g long, seen from
// request i: a request whose first token came within half a step of t was
// prefilled in it; one whose first token came earlier and whose end came
// later was decoding.
func stateAt(reqs []request, byFirst []int, i int, t, g float64) gap {
	o := gap{req: i, ms: g, at: t}
	half := g / 2
	for _, k := range byFirst {
		q := &reqs[k]
		if q.first > t+half {
			break
		}
		switch {
		case q.first >= t-half:
			o.seqs++
			o.tokens += float64(q.prompt)
			o.kv += float64(q.prompt)
			o.parts = append(o.parts, part{q: int64(q.prompt)})
		case q.end >= t-half:
			ctx := q.prompt + q.tokensBefore(t-half)
			o.seqs++
			o.tokens++
			o.kv += float64(ctx)
			o.parts = append(o.parts, part{cached: int64(ctx - 1), q: 1, decode: true})
		}
	}
	return o
}

// tokensBefore counts the tokens the request had received by t.
func (r *request) tokensBefore(t float64) int {
	n := 0
	for j, at := range r.at {
		if at > t {
			break
		}
		n += r.tokens[j]
	}
	return n
}

// peakGenerating is the most requests the run saw generating at once,
// between their first token and their end. At equal times an end counts
// before a first token: a slot freed at a step's end is taken in the next.
func peakGenerating(reqs []request) int {
	type event struct {
		t     float64
		delta int
	}
	ev := make([]event, 0, 2*len(reqs))
	for i := range reqs {
		ev = append(ev, event{reqs[i].first, 1}, event{reqs[i].end, -1})
	}
	slices.SortFunc(ev, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	n, peak := 0, 0
	for _, e := range ev {
		n += e.delta
		peak = max(peak, n)
	}
	return peak
}
