package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/sweep"
)

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"phase\":\"measured\",\"end_ns\":1}\nnot json\n"), 0o644)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	sw := filepath.Join(dir, "sweep")
	os.Mkdir(sw, 0o755)
	if err := sweep.Write(sw, &sweep.File{Schema: sweep.Schema, Serve: "server --port {port}", Configs: []sweep.Config{{Name: "a"}}}); err != nil {
		t.Fatal(err)
	}
	cold := filepath.Join(dir, "cold")
	os.Mkdir(cold, 0o755)
	if err := sweep.Write(cold, &sweep.File{Schema: sweep.Schema, StartupOnly: true, Configs: []sweep.Config{{Name: "a"}}}); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone")
	os.Mkdir(gone, 0o755)
	if err := sweep.Write(gone, &sweep.File{Schema: sweep.Schema, Configs: []sweep.Config{{Name: "seqs-4", RunDir: "x", Points: []sweep.Point{{}}}}}); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "badsweep"), 0o755)
	os.WriteFile(filepath.Join(dir, "badsweep", sweep.FileName), []byte("{}"), 0o644)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		// A damaged line is skipped with a warning naming it, or refused.
		{[]string{bad}, ExitOK, "warning: " + bad + ": skipped 1 damaged line(s), not counted: line 2"},
		{[]string{"--strict", bad}, ExitFailure, "line 2"},
		{[]string{empty}, ExitFailure, "holds no records"},
		{[]string{filepath.Join(dir, "missing")}, ExitFailure, "no such file"},
		// A format given as an argument: the flag was meant.
		{[]string{bad, "json"}, ExitUsage, "Error: \"json\" is not a run directory or records file: for json output, give --json\nTry: servebench report --json " + bad + "\n"},
		{[]string{"csv", bad}, ExitUsage, "Try: servebench report --format csv " + bad + "\n"},
		// A sweep's directory: its answer as recorded, alone, in the
		// formats that hold its tables.
		{[]string{sw}, ExitOK, ""},
		{[]string{"--format", "csv", sw}, ExitUsage, "Error: a sweep has several tables: --format csv is not one of html, json, markdown, text\n"},
		{[]string{"--slo", "ttft p95 <= 1s", "--slice", "1m", "--partial", sw}, ExitUsage,
			"Error: " + sw + " is a sweep's directory: --partial, --slice are for one configuration's run\nTry: servebench report [flags] " + filepath.Join(sw, "NAME")},
		{[]string{bad, sw}, ExitUsage, "Error: " + sw + " is a sweep's directory: report it alone"},
		{[]string{"--slo", "ttft p95 <= 1s", gone}, ExitFailure, "Error: seqs-4: stat " + filepath.Join(gone, "seqs-4") + ": no such file or directory\nTry: servebench report " + gone + "  (the answer as the sweep recorded it, which reads no run)\n"},
		{[]string{"--slo", "ttft p95 <= 1s", cold}, ExitUsage, "Error: " + cold + " is a --startup-only sweep: it ran no load, so there is nothing to judge"},
		{[]string{filepath.Join(dir, "badsweep")}, ExitFailure, "schema \"\", want \"servebench.sweep/v1\"\nTry: servebench sweep ... --out DIR writes DIR/sweep.json"},
	} {
		code, _, stderr := runMain(t, append([]string{"report"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("report %s: exit %d, stderr %q, want %d, %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}

// TestReportJudgesRecords: report --slo re-judges recorded requests, with
// run's verdict and exit codes.
func TestReportJudgesRecords(t *testing.T) {
	s := &scripted{ttft: 20 * time.Millisecond, gap: 5 * time.Millisecond, tokens: 4, prompt: 8}
	url := newScripted(t, s)
	dir := filepath.Join(t.TempDir(), "run")
	code, runOut, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--concurrency", "1,2", "--requests", "4", "--prompt-tokens", "8", "--output-tokens", "4",
		"--tokenizer", "cl100k_base", "--out", dir, "--slo", "ttft p50 <= 5s")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, out, _ := runMain(t, "report", "--slo", "ttft p50 <= 5s", dir)
	if code != 0 || !strings.Contains(out, "OBJECTIVE HOLDS") {
		t.Errorf("report of a passing objective: exit %d\n%s", code, out)
	}
	// The verdict block is the same as run printed.
	if i, j := strings.Index(runOut, "Objective"), strings.Index(out, "Objective"); i < 0 || j < 0 || runOut[i:] != out[j:] {
		t.Errorf("report's verdict differs from run's:\nrun:\n%s\nreport:\n%s", runOut, out)
	}
	code, _, stderr = runMain(t, "report", "--slo", "ttft p50 <= 1ms", dir)
	if code != ExitObjective || !strings.Contains(stderr, "ttft p50") {
		t.Errorf("report of a failing objective: exit %d, stderr %q", code, stderr)
	}
	code, out, _ = runMain(t, "report", "--json", "--slo", "ttft p50 <= 1ms", dir)
	if code != ExitObjective || !strings.Contains(out, `"verdict"`) {
		t.Errorf("report --json: exit %d\n%s", code, out)
	}
	code, _, stderr = runMain(t, "report", "--objective", "no-such-preset", dir)
	if code != ExitUsage || !strings.Contains(stderr, "no such file or preset") {
		t.Errorf("bad objective: exit %d, %q", code, stderr)
	}
}
