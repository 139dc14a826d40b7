package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// calibRun writes a quick built-in simulator run at concurrency 1 and 3.
func calibRun(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runKeepingClock(t, append([]string{"run", "--concurrency", "1,3", "--requests", "6", "--warmup", "0",
		"--prompt-tokens", "64", "--output-tokens", "24", "--out", dir}, args...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	return dir
}

// calibRealTime is a simulator file that runs the default simulator in
// real time. At its default speed-up of 10 a busy machine's 50 ms stall
// reads as a 500 ms step among steps of about 7 ms: a few of them moved
// the fitted decode step, and the run's own points, by 13-21% (2 runs in
// 10 under two CPU burners). In real time the same stall is 50 ms.
func calibRealTime(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(path, []byte("time_scale: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCalibrateOutput(t *testing.T) {
	// In real time: the steps it compares with themselves are read by the
	// client's clock, and a busy machine's delay of a few tenths of a ms,
	// ten times as long in model time at the default speed-up, spread
	// them so that the median of the fit's pooled steps and of one
	// point's could differ by 5% (6.16 against 6.47 ms).
	dir := calibRun(t, "--sim-config", calibRealTime(t))
	code, text, stderr := runMain(t, "calibrate", dir, "--concurrency", "2,6", "--bootstrap", "50")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"Fitted model (95% bootstrap intervals", "per_token_ms", "min_tokens",
		"request_overhead_ms", "slots", "8 (server)", "Residuals: gap RMS", "The run's points, measured / predicted", "Predicted (± one run's spread on this server", "±"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	code, text, stderr = runMain(t, "calibrate", dir, "--against", dir, "--bootstrap", "50")
	if code != 0 || !strings.Contains(text, "Held-out run "+dir) || !strings.Contains(text, "The server's own decode steps, fitted points / held-out point, one run") {
		t.Errorf("--against: exit %d, text lacks the held-out run or its steps:\n%s%s", code, text, stderr)
	}
	code, out, stderr := runMain(t, "calibrate", dir, "--against", dir, "--concurrency", "2,6", "--prompt-tokens", "64,512", "--bootstrap", "50", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Schema string `json:"schema"`
		Fit    struct {
			Params []struct {
				Name             string
				Value, Low, High float64
			} `json:"parameters"`
		} `json:"fit"`
		Measured     []json.RawMessage `json:"measured"`
		Against      []json.RawMessage `json:"against"`
		AgainstSteps []struct {
			Point     string
			Sequences int
			FitGaps   int     `json:"fit_gaps"`
			OtherGaps int     `json:"other_gaps"`
			FitMS     float64 `json:"fit_median_ms"`
			OtherMS   float64 `json:"other_median_ms"`
			SEMS      float64 `json:"se_ms"`
			Change    float64
		} `json:"against_steps"`
		Warnings    []string `json:"warnings"`
		Predictions []struct {
			Concurrency  int     `json:"concurrency"`
			PromptTokens int     `json:"prompt_tokens"`
			OutputTokens int     `json:"output_tokens"`
			TTFT         float64 `json:"ttft_p50_ms"`
			Decode       float64 `json:"decode_tps_per_request"`
			Output       float64 `json:"output_tps"`
			Spread       *struct {
				TTFT   float64 `json:"ttft_p50"`
				Decode float64 `json:"decode_tps_per_request"`
				Output float64 `json:"output_tps"`
			} `json:"spread"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Schema != "servebench.calibration/v1" || len(rep.Fit.Params) != 6 || len(rep.Measured) != 2 || len(rep.Against) != 2 || len(rep.Predictions) != 4 {
		t.Fatalf("report: %+v", rep)
	}
	// Against its own run the server did not change: the steps read the
	// same point by point, and no drift is warned of. The fit's table
	// pools the points, so a size two points share (one sequence, at the
	// edges of c=3) differs a little: by less than three standard errors
	// of the two medians. The one warning says the points were not held
	// out.
	if len(rep.AgainstSteps) == 0 || len(rep.Warnings) != 1 || !strings.HasPrefix(rep.Warnings[0], "--against "+dir+" is the run the fit read: its points are not held out") ||
		!strings.Contains(rep.Warnings[0], "--fit-concurrency (e.g. 1,3)") {
		t.Errorf("against itself: steps %+v, warnings %q; want steps and the one warning that nothing is held out", rep.AgainstSteps, rep.Warnings)
	}
	for _, s := range rep.AgainstSteps {
		if math.Abs(s.OtherMS-s.FitMS) > 3*s.SEMS || !(s.SEMS > 0) || !(s.FitMS > 0) || s.OtherGaps < 30 || !strings.HasPrefix(s.Point, "c=") {
			t.Errorf("against itself: step %+v, want the same median", s)
		}
	}
	for _, p := range rep.Fit.Params {
		if !(p.Low <= p.Value && p.Value <= p.High) {
			t.Errorf("%s = %v outside its interval [%v, %v]", p.Name, p.Value, p.Low, p.High)
		}
	}
	// Each prediction says how much one run of it differs from another:
	// the simulator's step jitter at work.
	for _, p := range rep.Predictions {
		if sp := p.Spread; sp == nil || !(sp.Decode > 0 && sp.Decode < 0.5) || !(sp.TTFT >= 0 && sp.TTFT < 0.5) || !(sp.Output >= 0 && sp.Output < 0.5) {
			t.Errorf("prediction %+v: spread %+v, want sd/mean of its replicas", p, sp)
		}
	}
	// A longer prompt never makes the first token earlier. (This run's
	// prompts all fit under the step's floor, so it cannot say how much
	// later: its warning says the prefill cost is extrapolated.)
	for i := 0; i < 4; i += 2 {
		short, long := rep.Predictions[i], rep.Predictions[i+1]
		if short.PromptTokens != 64 || long.PromptTokens != 512 || long.OutputTokens != 24 || !(long.TTFT >= short.TTFT) || !(short.Output > 0 && short.Decode > 0) {
			t.Errorf("predictions %+v then %+v", short, long)
		}
	}
}

func TestCalibrateErrors(t *testing.T) {
	empty := t.TempDir()
	few := filepath.Join(t.TempDir(), "few")
	if code, _, stderr := runMain(t, "run", "--concurrency", "1", "--requests", "2", "--warmup", "0", "--output-tokens", "3", "--out", few); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no directory", []string{}, 2, "calibrate needs a run directory"},
		{"missing directory", []string{filepath.Join(empty, "nope")}, 1, filepath.Join(empty, "nope") + ": stat"},
		{"missing directory's hint", []string{filepath.Join(empty, "nope")}, 1, "Try: servebench calibrate runs/a ("},
		{"no records", []string{empty}, 1, empty + ": open"},
		{"missing held-out run", []string{few, "--against", filepath.Join(empty, "nope")}, 1, "--against " + filepath.Join(empty, "nope") + ": stat"},
		{"missing held-out run's hint", []string{few, "--against", filepath.Join(empty, "nope")}, 1, "Try: servebench calibrate runs/a --against runs/b"},
		{"too few tokens", []string{few}, 1, few + ": too few streamed tokens to fit"},
		{"bad list", []string{few, "--concurrency", "2,x"}, 2, "--concurrency"},
		{"stray argument", []string{few, "extra"}, 2, "unexpected argument \"extra\""},
		{"negative slots", []string{few, "--slots", "-1"}, 2, "must not be negative"},
		{"the old spelling", []string{"--calibrate", few}, 2, "unknown flag --calibrate"},
	} {
		code, _, stderr := runMain(t, append([]string{"calibrate"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)", c.name, code, c.code, stderr, c.want)
		}
	}
	// The simulator's own --calibrate is told with its own command.
	code, _, stderr := runMain(t, "sim", "--calibrate", filepath.Join(empty, "nope"))
	if want := "Try: servebench sim --calibrate runs/a ("; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("sim: exit %d, stderr %q (want %q)", code, stderr, want)
	}
}

// TestCalibrateShared: with --config and --gpu the fit is also read into
// the shared roofline model of that model and device, and predictions run
// on it. The built-in simulator runs that very model (Llama-3.1-8B's shape
// on the catalog's H100-SXM), so the shared model predicts the run's own
// points as measured. (How well this short run pins each efficiency is
// for the intervals to say; docs/PERFORMANCE.md compares them with the
// simulator's settings on a longer run.)
func TestCalibrateShared(t *testing.T) {
	dir := calibRun(t, "--sim-config", calibRealTime(t))
	llama := filepath.Join("..", "plan", "testdata", "models", "Llama-3.1-8B")
	code, out, stderr := runMain(t, "calibrate", dir, "--config", llama, "--gpu", "H100-SXM", "--bootstrap", "80", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep struct {
		Fit struct {
			Shared struct {
				Device string
				Params []struct {
					Name             string
					Value, Low, High float64
				} `json:"parameters"`
			} `json:"shared"`
		} `json:"fit"`
		Measured []struct {
			Errors map[string]float64 `json:"errors"`
		} `json:"measured"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The same run without --config predicts with the agnostic model:
	// other figures, so the shared model is what predicted above.
	_, agnostic, _ := runMain(t, "calibrate", dir, "--bootstrap", "80", "--json")
	if strings.Contains(agnostic, `"shared"`) || measuredPart(agnostic) == measuredPart(out) {
		t.Errorf("predictions with --config are the agnostic model's")
	}
	sh := rep.Fit.Shared
	if sh.Device != "H100-SXM" || len(sh.Params) != 4 {
		t.Fatalf("shared: %+v", sh)
	}
	for _, p := range sh.Params {
		eff := strings.HasSuffix(p.Name, "_efficiency")
		if !(p.Low <= p.Value && p.Value <= p.High) || (eff && !(p.Value > 0 && p.High <= 1)) {
			t.Errorf("%s = %v [%v, %v]", p.Name, p.Value, p.Low, p.High)
		}
	}
	for i, m := range rep.Measured {
		for k, e := range m.Errors {
			if k != "ttft_p50" && math.Abs(e) > 0.1 {
				t.Errorf("point %d %s: the shared model predicts %+.1f%% off what was measured", i, k, 100*e)
			}
		}
	}
	for _, args := range [][]string{{"--gpu", "H100-SXM"}, {"--config", llama}, {"--config", llama, "--gpu", "H100-SXM,H200"}} {
		if code, _, stderr := runMain(t, append([]string{"calibrate", dir}, args...)...); code != 2 || !strings.Contains(stderr, "--gpu") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// measuredPart is the "measured" array of a calibration's JSON, as text.
func measuredPart(doc string) string {
	var rep struct {
		Measured json.RawMessage `json:"measured"`
	}
	_ = json.Unmarshal([]byte(doc), &rep)
	return string(rep.Measured)
}
