package sim

import "time"

// Config returns the server's configuration.
func (s *Server) Config() Config { return s.cfg }

// Decode is the mean time between output tokens, 0 for a single token.
func (o Outcome) Decode() time.Duration {
	if o.Tokens < 2 {
		return 0
	}
	return (o.E2E - o.TTFT) / time.Duration(o.Tokens-1)
}
