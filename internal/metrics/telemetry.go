package metrics

import "github.com/servebench/servebench/internal/telemetry"

// AddTelemetry summarises a run's samples (telemetry.jsonl, with the
// events its records stand for: telemetry.RecordEvent) over each point's
// measured window (run.json points[], the records' clock) into the
// point's telemetry, in model time, and lists the run's events first
// among the warnings: they may explain every figure below them.
func (s *Summary) AddTelemetry(samples []telemetry.Sample) {
	if s.Run == nil || len(samples) == 0 {
		return
	}
	scale := s.Run.Scale()
	for i := range s.Points {
		p := &s.Points[i]
		for _, pc := range s.Run.Points {
			if pc.Index != p.Index || pc.Span.Empty() {
				continue
			}
			w := telemetry.Window{From: pc.StartNS, To: pc.EndNS, Scale: scale, Samples: samples}
			p.Telemetry = telemetry.Summarize(w, p.OutputTokensMean*float64(p.Requests.Completed))
		}
	}
	// slices are in model time; samples on the run clock
	s.AddSliceTelemetry(func(_ int, from, to int64) *telemetry.Point {
		w := telemetry.Window{From: int64(float64(from) / scale), To: int64(float64(to) / scale), Scale: scale, Samples: samples}
		return telemetry.Summarize(w, 0)
	})
	if lines := telemetry.EventLines(samples, scale); lines != nil {
		s.Warnings = append(lines, s.Warnings...)
	}
}
