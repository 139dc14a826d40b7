package telemetry

// Window is what a per-point (or per-slice) summary reads: every sample of
// the run in time order, and the span [From, To] on the run clock that it
// summarises. A summary may look just outside the span: a counter's delta
// starts from the last reading at or before From.
type Window struct {
	From, To int64
	// Scale converts the run clock's durations to model time (the
	// simulator's time_scale; 1 for real servers).
	Scale   float64
	Samples []Sample
}
