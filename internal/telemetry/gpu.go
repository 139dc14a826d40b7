package telemetry

// summarizeGPUs summarises the window's gpu samples.
// (Being written: replace this body.)
func summarizeGPUs(w Window) []GPUPoint { return nil }
