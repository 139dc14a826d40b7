package plan

// Prediction is what a load is predicted to measure, in the terms of a
// run's summary: one per predicted point in the JSON of servebench plan
// (its own load) and plan --calibrate (each load asked for).
type Prediction struct {
	Concurrency  int `json:"concurrency"`
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// TTFTP50MS is the median time to first token.
	TTFTP50MS float64 `json:"ttft_p50_ms"`
	// DecodeTPS is the median per-request decode speed
	// (decode_tps_per_request p50).
	DecodeTPS float64 `json:"decode_tps_per_request"`
	// OutputTPS is the aggregate output throughput over all users.
	OutputTPS float64 `json:"output_tps"`
}
