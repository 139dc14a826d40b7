package calib

// Goal is the largest |predicted/measured − 1| a calibration's
// predictions are held to, per figure, against loads it did not fit
// (docs/PLANNER.md, Calibration).
type Goal struct {
	Throughput float64 // aggregate output tokens/s and per-user decode tokens/s
	TTFT       float64 // TTFT p50
}

// goalThroughput and goalTTFT are the calibration's goal: 10% for
// throughput and decode speed, 25% for TTFT p50, which queueing behind a
// step boundary moves by more.
const (
	goalThroughput = 0.10
	goalTTFT       = 0.25
)

// DefaultGoal is the calibration's goal.
var DefaultGoal = Goal{Throughput: goalThroughput, TTFT: goalTTFT}
