package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the report golden files")

// The run in testdata/run is a small recorded run against the built-in
// simulator, checked in so that its report is fixed: two closed-loop
// points (c=1, c=4) of 12 measured and 2 warm-up requests each, 64-token
// prompts and 16-token answers, where the KV cache, sized to
// testdata/run-sim.yaml, runs out once at c=4 (an oom event in its
// telemetry, beside the simulator's /metrics and the client's samples in
// telemetry.jsonl). It was made with
//
//	servebench run --sim-config testdata/run-sim.yaml --concurrency 1,4 \
//	    --requests 12 --warmup 2 --prompt-tokens 64 --output-tokens 16 --out testdata/run
//
// TestReportGolden renders it in every format, alone and judged against
// an objective, and compares exit code, stdout and stderr with
// testdata/report/*.golden (go test -run TestReportGolden -update
// rewrites them; read the diff).
func TestReportGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "csv", "markdown"} {
		for _, verdict := range []bool{false, true} {
			name, args := format, []string{"report", "--format", format}
			if verdict {
				name += "-objective"
				args = append(args, "--objective", "chat")
			}
			args = append(args, filepath.Join("testdata", "run"))
			t.Run(name, func(t *testing.T) { reportGolden(t, name, args...) })
		}
	}
}

// reportGolden runs servebench with args and compares its exit code,
// stdout and stderr with testdata/report/NAME.golden, or rewrites the file
// with -update.
func reportGolden(t *testing.T, name string, args ...string) {
	t.Helper()
	code, stdout, stderr := run(t, args...)
	got := fmt.Sprintf("$ servebench %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(args, " "), code, stdout, stderr)
	golden := filepath.Join("testdata", "report", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, strings.SplitN(t.Name(), "/", 2)[0])
	}
	if got != string(want) {
		t.Errorf("servebench %s differs from %s (-update rewrites it):\n%s", strings.Join(args, " "), golden, lineDiff(string(want), got))
	}
}

// lineDiff shows where got first departs from want, with a few lines of
// each around it; git diff after -update shows the rest.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	window := func(lines []string) string {
		return strings.Join(lines[max(0, i-2):min(len(lines), i+4)], "\n")
	}
	return fmt.Sprintf("first difference at line %d (want %d lines, got %d)\n--- want\n%s\n--- got\n%s", i+1, len(w), len(g), window(w), window(g))
}
