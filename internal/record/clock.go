package record

// ModelTime returns r as seen in model time when the target ran scale times
// faster than the time it models (a sped-up simulator, run.json
// time_scale): every instant and server-reported duration is multiplied by
// scale. Load stays as it is: it names the point as asked, in model time. A scale of 0 or 1 returns r
// itself; otherwise r is left untouched and a copy is returned, so records
// on disk keep the times the client measured.
func (r *Record) ModelTime(scale float64) *Record {
	if scale <= 0 || scale == 1 {
		return r
	}
	m := *r
	at := func(ns int64) int64 { return int64(float64(ns) * scale) }
	m.ScheduledNS, m.SentNS, m.EndNS = at(r.ScheduledNS), at(r.SentNS), at(r.EndNS)
	m.FirstTokenNS, m.FirstOutputNS = at(r.FirstTokenNS), at(r.FirstOutputNS)
	if r.Chunks != nil {
		m.Chunks = make([]Chunk, len(r.Chunks))
		for i, c := range r.Chunks {
			c.AtNS = at(c.AtNS)
			m.Chunks[i] = c
		}
	}
	if r.Server != nil {
		s := *r.Server
		s.PromptEvalDuration, s.EvalDuration = at(s.PromptEvalDuration), at(s.EvalDuration)
		s.LoadDuration, s.TotalDuration = at(s.LoadDuration), at(s.TotalDuration)
		m.Server = &s
	}
	return &m
}

// WallLoad is the load a client must offer in wall time to present l in
// model time to a target running scale times faster.
func (l Load) WallLoad(scale float64) Load {
	if scale > 0 && l.Rate > 0 {
		l.Rate *= scale
	}
	return l
}
