package metrics

import "github.com/servebench/servebench/internal/record"

// Per-request values. Each is defined once here (docs/METRICS.md) and used
// by every package that judges or shows a single request: the summary,
// SLO verdicts and goodput, overload detection, live progress and the
// engine check. Latencies are in ms; ok is false where a request does not
// have the value. None of them looks at r.Error: callers decide whether a
// failed request counts.

const nsPerMS = 1e6

func ms(ns int64) float64 { return float64(ns) / nsPerMS }

// TTFT is the time to first token from when the request was sent.
func TTFT(r *record.Record) (ms float64, ok bool) {
	if r.FirstTokenNS == 0 {
		return 0, false
	}
	return float64(r.FirstTokenNS-r.SentNS) / nsPerMS, true
}

// TTFTSched is the time to first token from the request's scheduled time:
// what an open-loop user waits, queueing in the client included.
func TTFTSched(r *record.Record) (ms float64, ok bool) {
	if r.FirstTokenNS == 0 {
		return 0, false
	}
	return float64(r.FirstTokenNS-r.ScheduledNS) / nsPerMS, true
}

// TTFO is the time to first output (the first content chunk, not a
// reasoning token) from when the request was sent.
func TTFO(r *record.Record) (ms float64, ok bool) {
	if r.FirstOutputNS == 0 {
		return 0, false
	}
	return float64(r.FirstOutputNS-r.SentNS) / nsPerMS, true
}

// E2E is the end-to-end latency from when the request was sent.
func E2E(r *record.Record) float64 { return ms(r.EndNS - r.SentNS) }

// E2ESched is the end-to-end latency from the scheduled time.
func E2ESched(r *record.Record) float64 { return ms(r.EndNS - r.ScheduledNS) }

// Queue is the client-side wait between the scheduled and the sent time.
func Queue(r *record.Record) float64 { return ms(r.SentNS - r.ScheduledNS) }

// TPOT is a request's time per output token after its first chunk, in ms:
// (end − first token) / (output tokens − tokens of the first chunk). The
// first chunk's tokens arrive together at the first token, so only the
// tokens after it were generated in the time after it; counting n − 1
// would read a server that bundles k0 tokens into its first chunk as
// faster by (n − 1)/(n − k0). ok is false for a request with no token
// after its first chunk (docs/METRICS.md, TPOT).
func TPOT(r *record.Record) (ms float64, ok bool) {
	after := r.OutputTokens - firstChunkTokens(r)
	if r.FirstTokenNS == 0 || after < 1 || r.EndNS <= r.FirstTokenNS {
		return 0, false
	}
	return float64(r.EndNS-r.FirstTokenNS) / nsPerMS / float64(after), true
}

// firstChunkTokens is how many tokens came with the first token: the first
// chunk's share, or 1 for a record without chunk counts.
func firstChunkTokens(r *record.Record) int {
	if len(r.Chunks) > 0 && r.Chunks[0].Tokens > 0 {
		return r.Chunks[0].Tokens
	}
	return 1
}

// DecodeSpeed is a request's decode speed in tokens per second, 1000/TPOT:
// tokens generated after the first chunk over the time after it
// (docs/METRICS.md, decode_tps_per_request).
func DecodeSpeed(r *record.Record) (tps float64, ok bool) {
	tpot, ok := TPOT(r)
	if !ok {
		return 0, false
	}
	return 1000 / tpot, true
}

// PrefillSpeed is the prompt tokens over TTFT, in tokens per second; ok is
// false without a prompt count or a positive TTFT.
func PrefillSpeed(r *record.Record) (tps float64, ok bool) {
	if r.FirstTokenNS == 0 || r.PromptTokens <= 0 || r.FirstTokenNS <= r.SentNS {
		return 0, false
	}
	return float64(r.PromptTokens) / (float64(r.FirstTokenNS-r.SentNS) / 1e9), true
}

// ServerPrefillSpeed is the server's own prompt_eval_count over
// prompt_eval_duration, in tokens per second (Ollama's final chunk).
func ServerPrefillSpeed(s *record.ServerTiming) (tps float64, ok bool) {
	if s == nil || s.PromptEvalCount <= 0 || s.PromptEvalDuration <= 0 {
		return 0, false
	}
	return float64(s.PromptEvalCount) / (float64(s.PromptEvalDuration) / 1e9), true
}

// ServerDecodeSpeed is the server's own eval_count over eval_duration, in
// tokens per second.
func ServerDecodeSpeed(s *record.ServerTiming) (tps float64, ok bool) {
	if s == nil || s.EvalCount <= 0 || s.EvalDuration <= 0 {
		return 0, false
	}
	return float64(s.EvalCount) / (float64(s.EvalDuration) / 1e9), true
}

// ITL calls add with each inter-token gap of a request's chunks, in ms:
// each gap between chunks is spread evenly over the tokens of the later
// chunk, and the first chunk's tokens give no sample (docs/METRICS.md, ITL).
func ITL(chunks []record.Chunk, add func(ms float64)) {
	for i := 1; i < len(chunks); i++ {
		k := chunks[i].Tokens
		if k <= 0 {
			continue
		}
		gap := ms(chunks[i].AtNS-chunks[i-1].AtNS) / float64(k)
		for range k {
			add(gap)
		}
	}
}
