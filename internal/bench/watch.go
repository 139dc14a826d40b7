package bench

import (
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/telemetry"
)

// Watcher sees a run as it goes: the live view (run --live) is one, and
// any command that runs a Session can give it one (Config.Watch). Every
// method returns at once, whatever the watcher does with what it is
// given: the run never waits for it. Record is called under the sink's
// lock, in the order records are written, each on the model clock, and
// the watcher must not keep the lock's holder waiting (a channel that
// drops, not one that blocks).
type Watcher interface {
	// Begin: a session opened; epoch is the records' clock's zero, and
	// planned the points it means to run (0 when a search decides).
	Begin(run *record.Run, epoch time.Time, planned int)
	// Point: point p (as the client runs it, in wall time) starts now.
	Point(p load.Point)
	// Sent: a request was handed to the backend.
	Sent()
	Record(r *record.Record)
	// Sample: telemetry read a sample (under the sampler's lock).
	Sample(s *telemetry.Sample)
	// PointDone: a point ended, with its summary so far.
	PointDone(p metrics.PointSummary)
	// Verdict: an objective's load was judged.
	Verdict(v slo.PointVerdict)
	// End: the session closed, with the summary summary.json holds and,
	// for an objective, its verdict (nil without).
	End(sum *metrics.Summary, v *slo.Verdict)
}
