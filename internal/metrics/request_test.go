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

// TestTPOTFirstChunkBundlesTokens: a server that sends its first k0 tokens
// in one chunk generated only n − k0 tokens in the time after that chunk.
// Every case is 10 tokens, first chunk at 100 ms, end at 260 ms.
func TestTPOTFirstChunkBundlesTokens(t *testing.T) {
	chunks := func(sizes ...int) []record.Chunk {
		// Evenly spaced from 100 ms to the end at 260 ms.
		var cs []record.Chunk
		for i, n := range sizes {
			at := 100*msNS + int64(i)*160*msNS/int64(len(sizes)-1)
			cs = append(cs, record.Chunk{AtNS: at, Tokens: n})
		}
		return cs
	}
	for _, c := range []struct {
		name   string
		chunks []record.Chunk
		tpot   float64 // ms
		ok     bool
	}{
		// 9 tokens after the first, one per chunk: 160 ms / 9.
		{"one token first", chunks(1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 160.0 / 9, true},
		// 2 tokens in the first chunk: 8 tokens in 160 ms.
		{"two tokens first", chunks(2, 1, 1, 1, 1, 1, 1, 1, 1), 20, true},
		// 3 tokens in the first chunk, then one or two a chunk: 7 tokens in 160 ms.
		{"three tokens first", chunks(3, 2, 1, 2, 2), 160.0 / 7, true},
		// No chunk counts (an old record): the first token alone.
		{"no chunks", nil, 160.0 / 9, true},
		// Every token in the first chunk: nothing was decoded after it.
		{"all in the first chunk", []record.Chunk{{AtNS: 100 * msNS, Tokens: 10}}, 0, false},
	} {
		r := &record.Record{SentNS: 0, FirstTokenNS: 100 * msNS, EndNS: 260 * msNS, OutputTokens: 10, Chunks: c.chunks}
		got, ok := TPOT(r)
		if ok != c.ok || math.Abs(got-c.tpot) > 1e-9 {
			t.Errorf("%s: TPOT = %v, %v; want %v, %v", c.name, got, ok, c.tpot, c.ok)
		}
		if !ok {
			continue
		}
		// The mean ITL of a request whose last chunk is its end is its TPOT.
		var sum float64
		var n int
		ITL(r.Chunks, func(g float64) { sum += g; n++ })
		if n > 0 && math.Abs(sum/float64(n)-got) > 1e-9 {
			t.Errorf("%s: mean ITL %v, TPOT %v", c.name, sum/float64(n), got)
		}
		if spd, _ := DecodeSpeed(r); math.Abs(spd-1000/c.tpot) > 1e-9 {
			t.Errorf("%s: decode speed %v, want %v", c.name, spd, 1000/c.tpot)
		}
	}
}
