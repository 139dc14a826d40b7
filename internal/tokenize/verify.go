package tokenize

// A prompt's words are measured once, at calibration, and its length is
// the sum of their costs: exact by construction wherever counts add up
// word by word, which calibration itself relies on. Counting every prompt
// again costs about 0.5 µs per token with a local tokenizer and a round
// trip with the server's /tokenize, which put seconds of preparation
// before a large run's first request. So a sample is counted instead: the
// first verifyFirst prompts of a Synth, one in verifyEvery up to the
// verifyUntil-th, and one in verifyLate after it. The sample thins out
// because each exact count adds less: 48 exact prompts have shown the
// tokenizer's counts add up over these words, and a long run then spends
// its CPU on sending, not on recounting (at one in 32, counting was a
// tenth of a 20-chunk run's client CPU).
// The first sampled prompt whose count is off turns counting on for every
// prompt after it, so a tokenizer whose counts do not add up costs what it
// always did, and a prompt that was counted is always corrected.
const (
	verifyFirst = 16
	verifyEvery = 32
	verifyUntil = 1024
	verifyLate  = 1024
)

// mustCount reports whether the next prompt built is counted.
func (s *Synth) mustCount() bool {
	return s.missed.Load() || sampled(s.built.Add(1))
}

// sampled reports whether the k-th prompt built (from 1) is in the sample.
func sampled(k int64) bool {
	every := int64(verifyEvery)
	if k > verifyUntil {
		every = verifyLate
	}
	return k <= verifyFirst || k%every == 0
}
