package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// TestCalibrateFitConcurrency: --fit-concurrency fits to some points of a
// run, and --against the same run then holds out the others. The fit is
// the one a run of those points alone gives (its records and run.json,
// copied into a directory of their own), and the held-out points are the
// rest, none fitted.
func TestCalibrateFitConcurrency(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	if code, _, stderr := runMain(t, "run", "--concurrency", "1,3,6,3", "--requests", "6", "--warmup", "0",
		"--prompt-tokens", "64", "--output-tokens", "24", "--out", dir); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	alone := filepath.Join(t.TempDir(), "c13")
	copyPoints(t, dir, alone, map[int]bool{1: true, 3: true})

	code, out, stderr := runMain(t, "calibrate", dir, "--fit-concurrency", "3,1", "--against", dir, "--bootstrap", "30", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	type figures struct {
		Concurrency int `json:"concurrency"`
	}
	type report struct {
		Run     string          `json:"run"`
		FitConc []int           `json:"fit_concurrency"`
		Fit     json.RawMessage `json:"fit"`
		Against []struct {
			Measured figures `json:"measured"`
		} `json:"against"`
		AgainstRun string `json:"against_run"`
		Measured   []struct {
			Measured figures `json:"measured"`
		} `json:"measured"`
		Repeats  []json.RawMessage `json:"against_repeats"`
		Warnings []string          `json:"warnings"`
	}
	var part report
	if err := json.Unmarshal([]byte(out), &part); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(part.FitConc) != 2 || part.FitConc[0] != 1 || part.FitConc[1] != 3 || part.AgainstRun != dir {
		t.Errorf("fit_concurrency %v, against_run %q; want [1 3] and %s", part.FitConc, part.AgainstRun, dir)
	}
	var fitted, held []int
	for _, m := range part.Measured {
		fitted = append(fitted, m.Measured.Concurrency)
	}
	for _, a := range part.Against {
		held = append(held, a.Measured.Concurrency)
	}
	if calib.ListText(fitted) != "1,3,3" || calib.ListText(held) != "6" || len(part.Repeats) != 0 || len(part.Warnings) != 0 {
		t.Errorf("fitted points %v, held out %v, repeats %d, warnings %q; want 1,3,3 fitted, 6 held out, no repeat or warning",
			fitted, held, len(part.Repeats), part.Warnings)
	}

	code, out, stderr = runMain(t, "calibrate", alone, "--bootstrap", "30", "--json")
	if code != 0 {
		t.Fatalf("the points alone: exit %d\n%s", code, stderr)
	}
	var whole report
	if err := json.Unmarshal([]byte(out), &whole); err != nil {
		t.Fatal(err)
	}
	if string(part.Fit) != string(whole.Fit) {
		t.Errorf("fit to c=1,3 of the sweep differs from the fit to a run of those points alone:\n%s\n%s", part.Fit, whole.Fit)
	}

	code, text, stderr := runMain(t, "calibrate", dir, "--fit-concurrency", "1,3", "--against", dir, "--bootstrap", "30")
	if code != 0 || !strings.Contains(text, "Calibration of "+dir+" at concurrency 1,3: 18 requests") ||
		!strings.Contains(text, "Held-out points of "+dir+" (the concurrencies not fitted)") {
		t.Errorf("text: exit %d\n%s%s", code, text, stderr)
	}
	// sim --calibrate fits the same points.
	code, cfg, stderr := runMain(t, "sim", "--calibrate", dir, "--fit-concurrency", "1,3", "--print-config")
	_, cfgAlone, _ := runMain(t, "sim", "--calibrate", alone, "--print-config")
	if code != 0 || cfg != cfgAlone {
		t.Errorf("sim --calibrate --fit-concurrency: exit %d, config\n%s\nwant that of the points alone\n%s%s", code, cfg, cfgAlone, stderr)
	}
}

// copyPoints writes a run directory holding the run's run.json and the
// records of its points at the concurrencies keep.
func copyPoints(t *testing.T, from, to string, keep map[int]bool) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := os.ReadFile(filepath.Join(from, rundir.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, rundir.RunFile), run, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(filepath.Join(from, rundir.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var kept strings.Builder
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var r record.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if keep[r.Load.Concurrency] {
			kept.Write(sc.Bytes())
			kept.WriteByte('\n')
			n++
		}
	}
	if err := sc.Err(); err != nil || n == 0 {
		t.Fatalf("records: %v, %d kept", err, n)
	}
	if err := os.WriteFile(filepath.Join(to, rundir.RecordsFile), []byte(kept.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCalibrateFitConcurrencyErrors(t *testing.T) {
	dir := calibRun(t) // concurrency 1 and 3
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not run", []string{"calibrate", dir, "--fit-concurrency", "1,5"}, 2, "--fit-concurrency 1,5: " + dir + " has no closed-loop point at concurrency 5 (its points: 1,3)"},
		{"not run's hint", []string{"calibrate", dir, "--fit-concurrency", "5"}, 2, "Try: list concurrencies the run measured, e.g. --fit-concurrency 1,3"},
		{"not a number", []string{"calibrate", dir, "--fit-concurrency", "1,x"}, 2, "--fit-concurrency \"1,x\""},
		{"only commas", []string{"calibrate", dir, "--fit-concurrency", ","}, 2, `--fit-concurrency ",": item 1 is empty`},
		{"nothing held out", []string{"calibrate", dir, "--fit-concurrency", "1,3", "--against", dir}, 2, "--fit-concurrency 1,3 takes every closed-loop point of " + dir + ": none is left to hold out"},
		{"sim, not run", []string{"sim", "--calibrate", dir, "--fit-concurrency", "4"}, 2, "has no closed-loop point at concurrency 4"},
		{"sim without a run", []string{"sim", "--fit-concurrency", "1"}, 2, "--fit-concurrency picks the points of the --calibrate run"},
	} {
		code, _, stderr := runMain(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)", c.name, code, c.code, stderr, c.want)
		}
	}
}
