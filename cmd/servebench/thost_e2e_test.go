package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostSaturatedRun copies the checked-in run, with the client at 185% of
// one core on 2 cores over one second at its second point (c=4): over 90%
// of its cores.
func hostSaturatedRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	recs, err := os.ReadFile("testdata/run/records.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/run/run.json")
	if err != nil {
		t.Fatal(err)
	}
	var run map[string]any
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	run["client_cpus"] = 2
	c := run["points"].([]any)[1].(map[string]any)["client"].(map[string]any)
	c["cpu_percent_of_one_core"], c["cpu_seconds"] = 185.0, 1.85
	if b, err = json.Marshal(run); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"records.jsonl": recs, "run.json": b} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHostClientSaturationFirst: a client near saturation is said in the
// summary's first lines in text and Markdown (under the header, above
// the table), and first among summary.json's warnings; the bottom list
// keeps the point's own figure, not the statement again.
func TestHostClientSaturationFirst(t *testing.T) {
	dir := hostSaturatedRun(t)
	const want = "the client was near saturation at c=4 (CPU 185% of one core on 2 cores): the figures there may be limited by the client, not the server"
	for _, tc := range []struct{ format, prefix string }{{"text", "WARNING "}, {"markdown", "> WARNING "}} {
		code, out, stderr := run(t, "report", "--format", tc.format, dir)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.format, code, stderr)
		}
		lines := strings.Split(out, "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "servebench · ") || !strings.HasPrefix(lines[2], tc.prefix+want) {
			t.Errorf("%s: the first lines are not the header and the saturation:\n%s", tc.format, out)
		}
		if n := strings.Count(out, "near saturation"); n != 1 {
			t.Errorf("%s: the statement is printed %d times:\n%s", tc.format, n, out)
		}
		if !strings.Contains(out, "c=4: the client used 185% CPU (of one core) on 2 cores") {
			t.Errorf("%s: the point's own warning is missing:\n%s", tc.format, out)
		}
	}
	code, out, stderr := run(t, "report", "--json", dir)
	var s struct{ Warnings []string }
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil {
		t.Fatalf("json: exit %d, %v\n%s", code, err, stderr)
	}
	if len(s.Warnings) == 0 || !strings.HasPrefix(s.Warnings[0], want) {
		t.Errorf("summary.json warnings %q, want first %q", s.Warnings, want)
	}
}
