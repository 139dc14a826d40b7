package metrics

import (
	"math"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// TestRequestValues checks each per-request value against a request whose
// timings are known: scheduled at 100 ms, sent at 110 ms, first reasoning
// token at 160 ms, first output at 180 ms, 11 tokens ending at 660 ms.
func TestRequestValues(t *testing.T) {
	r := &record.Record{
		ScheduledNS: 100 * msNS, SentNS: 110 * msNS, FirstTokenNS: 160 * msNS, FirstOutputNS: 180 * msNS,
		EndNS: 660 * msNS, PromptTokens: 100, OutputTokens: 11,
		Server: &record.ServerTiming{PromptEvalCount: 100, PromptEvalDuration: 40 * msNS, EvalCount: 10, EvalDuration: 400 * msNS},
	}
	withOK := func(v float64, ok bool) float64 {
		if !ok {
			return math.NaN()
		}
		return v
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ttft from sent", withOK(TTFT(r)), 50},
		{"ttft from schedule", withOK(TTFTSched(r)), 60},
		{"ttfo", withOK(TTFO(r)), 70},
		{"e2e from sent", E2E(r), 550},
		{"e2e from schedule", E2ESched(r), 560},
		{"queue", Queue(r), 10},
		// (660 − 160) ms over the 10 tokens after the first.
		{"tpot", withOK(TPOT(r)), 50},
		{"decode speed", withOK(DecodeSpeed(r)), 20},
		// 100 prompt tokens in a 50 ms TTFT.
		{"prefill speed", withOK(PrefillSpeed(r)), 2000},
		{"server prefill", withOK(ServerPrefillSpeed(r.Server)), 2500},
		{"server decode", withOK(ServerDecodeSpeed(r.Server)), 25},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestRequestValuesMissing: a request without the events a value needs
// has no value, rather than a value computed from a zero timestamp.
func TestRequestValuesMissing(t *testing.T) {
	noToken := &record.Record{SentNS: 10 * msNS, EndNS: 20 * msNS, OutputTokens: 0, PromptTokens: 5}
	oneToken := &record.Record{SentNS: 10 * msNS, FirstTokenNS: 15 * msNS, EndNS: 20 * msNS, OutputTokens: 1}
	cases := []struct {
		name string
		ok   bool
	}{
		{"ttft without a token", second(TTFT(noToken))},
		{"ttft from schedule without a token", second(TTFTSched(noToken))},
		{"ttfo without output", second(TTFO(oneToken))},
		{"tpot of one token", second(TPOT(oneToken))},
		{"decode speed of one token", second(DecodeSpeed(oneToken))},
		{"prefill speed without a prompt count", second(PrefillSpeed(oneToken))},
		{"prefill speed without a token", second(PrefillSpeed(noToken))},
		{"server prefill without timings", second(ServerPrefillSpeed(nil))},
		{"server decode with zero duration", second(ServerDecodeSpeed(&record.ServerTiming{EvalCount: 3}))},
	}
	for _, c := range cases {
		if c.ok {
			t.Errorf("%s: ok", c.name)
		}
	}
}

func second(_ float64, ok bool) bool { return ok }
