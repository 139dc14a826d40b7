package sim

import "math"

// Slot-first admission (EngineConfig.OverheadIn = OverheadInSlot): a
// request takes a slot first and spends its overhead holding it, as
// Ollama's front server takes one of OLLAMA_NUM_PARALLEL and only then
// forwards the request to its runner (health check, request, tokenization,
// the runner's lock). A request that queued for a slot therefore reaches
// the engine its overhead after the slot freed, never in the step that
// freed it, and a slot stands empty meanwhile.

// slotFirst says requests spend their overhead holding a slot.
func (e *engine) slotFirst() bool { return e.cfg.Engine.OverheadIn == OverheadInSlot }

// hasSlot says s may run now as far as slots go.
func (e *engine) hasSlot(s *seq) bool {
	if e.slotFirst() {
		return s.granted
	}
	return len(e.running) < e.cfg.Engine.MaxNumSeqs
}

// grant gives free slots to the waiting requests (all have arrived) in order, each from
// when its slot freed or it arrived, whichever is later; it reaches the
// scheduler the request overhead after that.
func (e *engine) grant() {
	if !e.slotFirst() {
		return
	}
	for _, s := range e.waiting {
		if s.granted {
			continue
		}
		if len(e.running)+e.granted >= e.cfg.Engine.MaxNumSeqs {
			return
		}
		s.granted, s.ready = true, math.Max(s.arrival, e.takeFreed())+e.perf.RequestTime()
		e.granted++
	}
}

// takeFreed is when the slot a grant takes became free: the earliest freed
// of those free, or 0 for one no request has held yet.
func (e *engine) takeFreed() float64 {
	free := e.cfg.Engine.MaxNumSeqs - len(e.running) - e.granted
	if free > len(e.freedAt) || len(e.freedAt) == 0 {
		return 0
	}
	k := 0
	for i, t := range e.freedAt {
		if t < e.freedAt[k] {
			k = i
		}
	}
	t := e.freedAt[k]
	e.freedAt = append(e.freedAt[:k], e.freedAt[k+1:]...)
	return t
}

// release records that a slot freed now.
func (e *engine) release() {
	if e.slotFirst() {
		e.freedAt = append(e.freedAt, e.now)
	}
}

// unqueued is the waiting request s leaving the queue for a slot it was
// granted (admitted, or aborted while holding it).
func (e *engine) unqueued(s *seq) {
	if s.granted {
		s.granted = false
		e.granted--
	}
}
