package sim

import (
	"fmt"
	"slices"
	"time"
)

// Request is one request for Simulate.
type Request struct {
	// Arrival is the model time at which the request arrives; SimulateClosed
	// ignores it.
	Arrival      time.Duration
	PromptTokens int
	OutputTokens int
}

// Outcome is what happened to one request, in model time.
type Outcome struct {
	Request
	Queued      time.Duration // through the request overhead → first scheduled
	TTFT        time.Duration // arrival → first token
	E2E         time.Duration // arrival → last token
	Tokens      int           // tokens generated
	Preemptions int
	Err         error // ErrKVCacheFull under PreemptReject, or why the request is invalid
}

// Simulate runs the engine over an open-loop arrival schedule on a virtual
// clock (no sleeping) and returns each request's outcome, in the order
// given, and every engine step. Runs are deterministic for a given Config.
func Simulate(cfg Config, reqs []Request) ([]Outcome, []Step, error) {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(reqs[a].Arrival - reqs[b].Arrival) })
	next := 0
	return simulate(cfg, reqs, false, func(now float64, _ int) []int {
		var due []int
		for next < len(order) && reqs[order[next]].Arrival.Seconds() <= now {
			due = append(due, order[next])
			next++
		}
		return due
	}, func() (float64, bool) {
		if next < len(order) {
			return reqs[order[next]].Arrival.Seconds(), true
		}
		return 0, false
	})
}

// SimulateClosed runs reqs as concurrency users who each send their next
// request the moment their previous one ends (a closed loop), or Arrival
// after it: a real client's users send microseconds apart, and a request
// ready a moment after the engine started a step waits for the next one.
// Arrival is set to the send time in the outcomes.
func SimulateClosed(cfg Config, concurrency int, reqs []Request) ([]Outcome, []Step, error) {
	if concurrency < 1 {
		return nil, nil, fmt.Errorf("concurrency must be at least 1 (got %d)", concurrency)
	}
	next, free := 0, concurrency
	return simulate(cfg, reqs, true, func(_ float64, ended int) []int {
		free += ended
		var due []int
		for ; free > 0 && next < len(reqs); free-- {
			due = append(due, next)
			next++
		}
		return due
	}, func() (float64, bool) { return 0, false })
}

// simulate drives the engine: due returns the requests that arrive by model
// time now, given how many ended since the last call; nextArrival says when
// the next one arrives if the engine falls idle. In a closed loop a request
// arrives when it is sent; otherwise at its Arrival.
func simulate(cfg Config, reqs []Request, closed bool, due func(now float64, ended int) []int,
	nextArrival func() (float64, bool)) ([]Outcome, []Step, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	e := newEngine(cfg)
	out := make([]Outcome, len(reqs))
	seqs := make(map[*seq]int, len(reqs))
	var steps []Step
	ended := 0
	for {
		arrivals := due(e.now, ended)
		ended = 0
		for _, i := range arrivals {
			r := reqs[i]
			arrival := min(r.Arrival.Seconds(), e.now)
			if closed {
				r.Arrival = seconds(e.now) + r.Arrival
				arrival = r.Arrival.Seconds()
			}
			out[i].Request = r
			if out[i].Err = checkRequest(cfg, r); out[i].Err != nil {
				ended++
				continue
			}
			s := &seq{id: uint64(i), prompt: r.PromptTokens, target: r.OutputTokens}
			e.add(s, arrival)
			seqs[s] = i
		}
		if e.idle() {
			if ended > 0 {
				continue
			}
			t, ok := nextArrival()
			if !ok {
				return out, steps, nil
			}
			e.now = max(e.now, t)
			continue
		}
		st, ok := e.step()
		if !ok {
			return out, steps, fmt.Errorf("engine stalled at %.3fs with %d waiting", e.now, len(e.waiting))
		}
		if st.Seqs > 0 {
			steps = append(steps, st.Step)
		}
		for _, s := range append(st.finished, st.failed...) {
			i := seqs[s]
			delete(seqs, s)
			out[i] = outcome(out[i].Request, s)
			ended++
		}
	}
}

func outcome(r Request, s *seq) Outcome {
	o := Outcome{Request: r, Tokens: s.generated, Preemptions: s.preemptions, Err: s.err}
	if s.scheduled >= 0 {
		o.Queued = seconds(s.scheduled - s.ready)
	}
	if s.firstToken >= 0 {
		o.TTFT = seconds(s.firstToken - s.arrival)
		o.E2E = seconds(s.lastToken - s.arrival)
	}
	return o
}

// checkRequest rejects what a server would refuse before scheduling.
func checkRequest(cfg Config, r Request) error {
	if r.PromptTokens < 1 || r.OutputTokens < 1 {
		return fmt.Errorf("prompt and output must be at least 1 token (got %d and %d)", r.PromptTokens, r.OutputTokens)
	}
	if limit := cfg.EffectiveMaxModelLen(); r.PromptTokens+r.OutputTokens > limit {
		return fmt.Errorf("%d prompt + %d output tokens exceed max_model_len %d", r.PromptTokens, r.OutputTokens, limit)
	}
	return nil
}
