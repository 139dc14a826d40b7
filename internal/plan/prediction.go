package plan

// Prediction is what a load is predicted to measure, in the terms of a
// run's summary: one per predicted point in the JSON of servebench plan
// (its own load, per device) and servebench calibrate (each load asked for).
type Prediction struct {
	// Device names the device of an ordinary plan's prediction.
	Device       string `json:"device,omitempty"`
	Concurrency  int    `json:"concurrency"`
	PromptTokens int    `json:"prompt_tokens"`
	OutputTokens int    `json:"output_tokens"`
	// TTFTP50MS is the median time to first token.
	TTFTP50MS float64 `json:"ttft_p50_ms"`
	// DecodeTPS is the median per-request decode speed
	// (decode_tps_per_request p50).
	DecodeTPS float64 `json:"decode_tps_per_request"`
	// OutputTPS is the aggregate output throughput over all users.
	OutputTPS float64 `json:"output_tps"`
	// Spread, in a calibrated prediction, is how much one run of the
	// point's requests differs from another on the fitted server: the
	// simulator's replicas' figures, sample sd over mean (its step jitter
	// and the server's wander at work). Ordinary plans have none.
	Spread *Ratios `json:"spread,omitempty"`
}

// Ratios are the three figures of a prediction as fractions: a spread (sd
// over mean), or an error (predicted/measured − 1).
type Ratios struct {
	TTFT      float64 `json:"ttft_p50"`
	DecodeTPS float64 `json:"decode_tps_per_request"`
	OutputTPS float64 `json:"output_tps"`
}

// predictions are a plan's own load on each device it could time.
func predictions(w Workload, devs []DeviceResult) []Prediction {
	var out []Prediction
	for _, d := range devs {
		f := d.Perf
		if !d.Supported || f.Batch == 0 || !(f.DecodeTPS > 0) {
			continue
		}
		out = append(out, Prediction{Device: d.Device, Concurrency: w.Concurrency, PromptTokens: w.PromptTokens,
			OutputTokens: w.OutputTokens, TTFTP50MS: f.TTFTP50S * 1e3, DecodeTPS: f.DecodeTPS, OutputTPS: f.AggregateTPS})
	}
	return out
}
