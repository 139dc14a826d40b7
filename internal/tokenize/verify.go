package tokenize

// A prompt's words are measured once, at calibration, and its length is
// the sum of their costs: exact by construction wherever counts add up
// word by word, which calibration itself relies on. Counting every prompt
// again costs about 0.5 µs per token with a local tokenizer and a round
// trip with the server's /tokenize, which put seconds of preparation
// before a large run's first request. So a sample is counted instead: the
// first verifyFirst prompts of a Synth and one in verifyEvery after them.
// The first sampled prompt whose count is off turns counting on for every
// prompt after it, so a tokenizer whose counts do not add up costs what it
// always did, and a prompt that was counted is always corrected.
const (
	verifyFirst = 16
	verifyEvery = 32
)

// mustCount reports whether the next prompt built is counted.
func (s *Synth) mustCount() bool {
	k := s.built.Add(1)
	return s.missed.Load() || k <= verifyFirst || k%verifyEvery == 0
}
