package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rejudgeSweep: report --slo on a sweep judged as it ran, by the same
// objective, prints its sweep.json again, byte for byte; by one no
// configuration meets, no recommendation and exit 3.
func rejudgeSweep(t *testing.T, dir string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	code, got, stderr := runEnv(t, nil, "report", "--slo", "ttft p95 <= 5s", "--json", dir)
	if code != 0 || got != string(want) {
		t.Errorf("report --slo (the sweep's own) --json: exit %d, want 0 and sweep.json as written:\n%s\n%s", code, got, stderr)
	}
	code, got, stderr = runEnv(t, nil, "report", "--slo", "ttft p95 <= 1ms", dir)
	if code != 3 || !strings.Contains(got, "No recommendation (objective command-line)") || !strings.Contains(got, "not_met") {
		t.Errorf("report --slo that none meets: exit %d, want 3\n%s\n%s", code, got, stderr)
	}
}

// reportSweepAgain: report on a sweep's directory prints what the sweep
// printed at its end, in each format, and exits as it did (3: the
// objective unmet); moved elsewhere, its page still holds each
// configuration's run.
func reportSweepAgain(t *testing.T, dir, swept string) {
	t.Helper()
	code, text, stderr := runEnv(t, nil, "report", dir)
	if code != 3 || !strings.HasSuffix(swept, text) || !strings.Contains(text, "Sweep: ") {
		t.Errorf("report %s: exit %d, want 3, and the end of the sweep's output:\n%s\nsweep printed:\n%s\n%s", dir, code, text, swept, stderr)
	}
	code, md, _ := runEnv(t, nil, "report", "--format", "markdown", dir)
	if code != 3 || !strings.Contains(md, "| seqs-2 | ") || !strings.Contains(md, "No recommendation") {
		t.Errorf("report --format markdown: exit %d\n%s", code, md)
	}
	want, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	code, js, _ := runEnv(t, nil, "report", "--json", moved)
	wantJS := strings.ReplaceAll(string(want), `"run_dir": "`+filepath.Join(dir, "seqs-2"), `"run_dir": "`+filepath.Join(moved, "seqs-2"))
	if code != 3 || js != wantJS {
		t.Errorf("report --json of the moved sweep: exit %d, want sweep.json with its run under the new directory:\n%s", code, js)
	}
	code, page, _ := runEnv(t, nil, "report", "--format", "html", moved)
	if code != 3 || !strings.Contains(page, `"runs":[{"name":"seqs-2"`) {
		t.Errorf("report --format html of the moved sweep: exit %d; the page lacks the configuration's run", code)
	}
	if code, _, stderr := runEnv(t, nil, "report", "--slice", "1m", moved); code != 2 || !strings.Contains(stderr, "--slice is for one configuration's run") {
		t.Errorf("report --slice on a sweep: exit %d, want a usage error\n%s", code, stderr)
	}
}
