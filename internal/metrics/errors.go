package metrics

// Errors are a summary's failed requests by class, over every point, and
// the first sample message of the most frequent class ("" when none was
// kept): what a run in which every request failed is told by.
func (s *Summary) Errors() (counts map[string]int, sample string) {
	counts = map[string]int{}
	for _, p := range s.Points {
		for c, n := range p.Requests.Errors {
			counts[c] += n
		}
	}
	if len(counts) == 0 {
		return counts, ""
	}
	top := ErrorClasses(counts)[0]
	for _, p := range s.Points {
		if m := p.Requests.ErrorSamples[top]; m != "" {
			return counts, m
		}
	}
	return counts, ""
}
