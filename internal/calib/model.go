package calib

import (
	"math"

	"github.com/servebench/servebench/internal/perfmodel"
)

// Model is the engine-agnostic model a calibration fits, in the units it
// prints (docs/PLANNER.md, Calibration):
//
//	step = step_ms + per_token_ms·max(min_tokens, tokens) + per_seq_ms·sequences + per_kv_token_ms·kv
//
// tokens are those run through the model (one per decoding sequence plus
// the prompt tokens prefilled); kv the KV entries read and written. Below
// min_tokens a step costs as much as at it: the weights are read once a
// step whatever the batch, and compute overtakes that read only past
// min_tokens. Each request also spends request_overhead_ms outside steps,
// before it is scheduled.
type Model struct {
	StepMS            float64 `json:"step_ms"`
	PerTokenMS        float64 `json:"per_token_ms"`
	MinTokens         float64 `json:"min_tokens"`
	PerSeqMS          float64 `json:"per_seq_ms"`
	PerKVTokenMS      float64 `json:"per_kv_token_ms"`
	RequestOverheadMS float64 `json:"request_overhead_ms"`
}

// StepMSFor is the model's step time, ms.
func (m Model) StepMSFor(seqs, tokens, kv float64) float64 {
	return m.StepMS + m.PerTokenMS*math.Max(m.MinTokens, tokens) + m.PerSeqMS*seqs + m.PerKVTokenMS*kv
}

// Timer is the model as the simulator runs it: the shared model's Fitted
// form, whose weight-streaming term is the floor's cost.
func (m Model) Timer() perfmodel.Fitted {
	return perfmodel.Fitted{Fixed: m.StepMS / 1e3, Weights: m.PerTokenMS * m.MinTokens / 1e3, PerToken: m.PerTokenMS / 1e3,
		PerKVToken: m.PerKVTokenMS / 1e3, PerSeq: m.PerSeqMS / 1e3, Request: m.RequestOverheadMS / 1e3}
}
