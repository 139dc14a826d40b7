package plan

import "math"

// closedLoop is the steady state of users closed-loop users (each sends
// its next request when the previous ends) served batch at a time: the
// load-dependent part of a plan, on top of the idle figures of the shared
// performance model. The simulator reaches the same state by scheduling;
// this is its closed form.
type closedLoop struct {
	users, batch int64
	out          int64
	pre          float64 // a prompt's prefill alone (idle)
	step         float64 // a decode step at the batch
	stall        float64 // what one other request's prefill adds to the batch's decode
	req          float64 // per-request overhead outside engine steps
}

// maxPrefillLoad caps the prefill utilisation the queueing term sees: at
// 1 the mean wait diverges while a closed loop's stays bounded.
const maxPrefillLoad = 0.9

// tpot is the time per output token: the decode step plus each other
// user's prefill once per request (chunked prefill shares their steps).
func (l closedLoop) tpot() float64 {
	return l.step + float64(l.batch-1)*l.stall/float64(l.out)
}

// service is how long a request holds its slot: prefill (with its wait
// for other prefills) and the decode of its remaining tokens.
func (l closedLoop) service(prefillWait float64) float64 {
	return prefillWait + l.pre + float64(l.out-1)*l.tpot()
}

// slotWait is the wait for a slot when more users than slots: in a
// closed loop every user shares it. Throughput is batch / service, a
// user's cycle users / throughput, and what the cycle holds beyond the
// overhead and the service is the wait, (users/batch - 1) x service - req.
// It is continuous in users: 0 up to the point where slots run out.
func (l closedLoop) slotWait(service float64) float64 {
	if l.users <= l.batch {
		return 0
	}
	return max(0, (float64(l.users)/float64(l.batch)-1)*service-l.req)
}

// prefillLoad is the share of time the engine spends on the other
// batch members' prefills: each other user prefills once per cycle.
func (l closedLoop) prefillLoad(cycle float64) float64 {
	if l.batch <= 1 || !(cycle > 0) {
		return 0
	}
	return min(maxPrefillLoad, float64(l.batch-1)*l.pre/cycle)
}

// solve finds the steady state: the prefill wait depends on the cycle,
// which depends on the wait; a few fixed-point rounds converge because
// the wait is a small part of the cycle until the load saturates.
func (l closedLoop) solve() (prefillWait, slotWait, load float64) {
	for range 8 {
		svc := l.service(prefillWait)
		slotWait = l.slotWait(svc)
		load = l.prefillLoad(l.req + slotWait + svc)
		// A request arriving while the engine is busy waits out the step
		// in progress (half of one on average) and the prefills queued
		// ahead of it, rho / (1 - rho) prefills: a closed loop's prompts
		// come in bunches (users who finished together send together), so
		// more than a deterministic queue's half of that; it fits NIM's
		// TTFTs at 5-50 users within 20% where the half missed by 28%.
		prefillWait = 0
		if l.batch > 1 {
			prefillWait = l.step/2 + l.pre*load/(1-load)
		}
	}
	return prefillWait, slotWait, load
}

// ttft is the p50, p95 and burst time to first token.
func (l closedLoop) ttft() (p50, p95, burst float64) {
	pw, sw, load := l.solve()
	p50 = l.req + sw + pw + l.pre
	busy := 0.0
	if l.batch > 1 {
		busy = load / float64(l.batch-1)
	}
	p95 = l.req + sw + l.step + l.pre*float64(1+binomQuantile(l.batch-1, busy, 0.95))
	burst = l.req + sw + float64(l.batch)*l.pre
	return p50, max(p95, p50), max(burst, p50)
}

// outputTPS is the closed loop's output throughput, users x output /
// E2E, never above the batch's decode rate.
func (l closedLoop) outputTPS(e2e float64) float64 {
	capped := float64(l.batch) / l.tpot()
	if !(e2e > 0) || math.IsInf(capped, 0) {
		return 0
	}
	return min(float64(l.users)*float64(l.out)/e2e, capped)
}
