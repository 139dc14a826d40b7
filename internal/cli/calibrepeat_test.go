package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/calib"
)

// TestCalibrateAgainstRepeats: a held-out run that lists a load twice
// gets it in against_repeats, the prediction set against the mean.
func TestCalibrateAgainstRepeats(t *testing.T) {
	fit, held := calibRun(t), calibRun(t, "--concurrency", "2,2")
	code, out, stderr := runMain(t, "calibrate", fit, "--against", held, "--bootstrap", "20", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep calib.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Against) != 2 || len(rep.AgainstRepeats) != 1 {
		t.Fatalf("against %d points, repeats %+v; want 2 and one repeated load", len(rep.Against), rep.AgainstRepeats)
	}
	r := rep.AgainstRepeats[0]
	mean := (rep.Against[0].Measured.DecodeTPS + rep.Against[1].Measured.DecodeTPS) / 2
	if r.Concurrency != 2 || r.Runs != 2 || math.Abs(r.Mean.DecodeTPS-mean) > 1e-9 || math.Abs(r.Errors.DecodeTPS-(r.Predicted.DecodeTPS/mean-1)) > 1e-9 {
		t.Errorf("repeated load %+v, want c=2 over 2 runs, mean decode %v", r, mean)
	}
	code, text, _ := runMain(t, "calibrate", fit, "--against", held, "--bootstrap", "20")
	if code != 0 || !strings.Contains(text, "Held-out loads measured more than once") {
		t.Errorf("text: exit %d, no repeated loads:\n%s", code, text)
	}
}
