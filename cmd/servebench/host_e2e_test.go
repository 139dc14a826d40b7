package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
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

// TestHostFollowsLoopbackServer: the binary finds the process listening
// on a loopback target's port (this test's own, which serves it), samples
// its memory and CPU into telemetry.jsonl and every point's summary, and
// says what it followed; a --server-pid naming no process is refused.
func TestHostFollowsLoopbackServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the server process is read from Linux's /proc")
	}
	srv := httptest.NewServer(&slowServer{gap: 10 * time.Millisecond, tokens: 5})
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	args := []string{"run", "--url", srv.URL, "--api", "openai-completions", "--model", "m", "--concurrency", "1,2",
		"--requests", "12", "--prompt-tokens", "8", "--output-tokens", "5", "--tokenizer", "cl100k_base",
		"--no-preflight", "--sample-interval", "50ms"}
	code, _, stderr := run(t, append(args, "--out", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	pid := os.Getpid()
	if want := fmt.Sprintf("server process %d (", pid); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say it follows this process (%q):\n%s", want, stderr)
	}
	read, steal := 0, 0
	for _, s := range jsonLines[telemetry.Sample](t, filepath.Join(dir, rundir.TelemetryFile)) {
		if h := s.Host; h != nil && h.ServerPID == pid && h.ServerRSSBytes != nil && *h.ServerRSSBytes > 0 {
			read++
		}
		if h := s.Host; h != nil && h.StealPercent != nil {
			switch {
			case h.CPUPercent == nil:
				t.Errorf("steal %v%% without the machine's busy share", *h.StealPercent)
			case *h.StealPercent < 0 || *h.StealPercent > *h.CPUPercent+1e-6:
				t.Errorf("steal %v%% of the machine's busy %v%%: not a part of it", *h.StealPercent, *h.CPUPercent)
			}
			steal++
		}
	}
	if read == 0 {
		t.Errorf("no host sample read the server process %d", pid)
	}
	if steal == 0 {
		t.Errorf("no host sample read the machine's steal time")
	}
	var sum struct {
		Points []struct{ Telemetry *telemetry.Point }
	}
	telemetryJSON(t, filepath.Join(dir, "summary.json"), &sum)
	for i, p := range sum.Points {
		if p.Telemetry == nil || p.Telemetry.Host == nil || p.Telemetry.Host.ServerRSSBytesMax == nil || p.Telemetry.Host.RAMAvailableBytesMin == nil ||
			p.Telemetry.Host.StealPercentMean == nil {
			t.Errorf("point %d: no server RSS, available RAM or steal in points[].telemetry.host", i)
		}
	}

	code, _, stderr = run(t, append(args, "--server-pid", "2147483646", "--out", filepath.Join(t.TempDir(), "r2"))...)
	if code != 2 || !strings.Contains(stderr, "--server-pid: 2147483646: no such process") || !strings.Contains(stderr, "Try: servebench run --server-pid") {
		t.Errorf("a missing --server-pid: exit %d\n%s", code, stderr)
	}
}
