package record

import "testing"

// A replay's point is labelled with the window's mean rate to three
// significant digits; a point at another rate replays the trace that many
// times faster.
func TestTraceNominalRate(t *testing.T) {
	for _, c := range []struct {
		mean, rate    float64
		nominal, want float64
	}{
		{2.2734, 2.27, 2.27, 1},   // the replay itself
		{2.2734, 4.54, 2.27, 2},   // twice as fast
		{0, 1, 1, 1},              // one instant: any rate labels it
		{123.456, 61.5, 123, 0.5}, // slower than the trace
		{2.2734, 0, 2.27, 1},      // no rate: the replay itself
	} {
		tr := &Trace{MeanRate: c.mean}
		if got := tr.NominalRate(); got != c.nominal {
			t.Errorf("mean %v: nominal rate %v, want %v", c.mean, got, c.nominal)
		}
		if got := tr.Scale(c.rate); got != c.want {
			t.Errorf("mean %v at %v: scale %v, want %v", c.mean, c.rate, got, c.want)
		}
	}
}
