// Package perfmodel owns servebench's one performance model: how long an
// inference engine's step takes for the work in it, what a request costs
// besides its steps, and how much KV cache an engine's memory rule leaves.
// The planner (internal/plan) evaluates it in closed form; the simulator
// (internal/sim) runs its scheduler on it. Both build a Model from their
// own inputs and call the same functions, so an idle simulator and a plan
// agree by construction and differ only by scheduling dynamics.
//
// A StepTimer is all the simulator needs: Model (the roofline) is one, and
// Fitted (an engine-agnostic model with coefficients measured from a run)
// is another.
package perfmodel
