package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

func TestRunShardUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"shard out of range", []string{"--shard", "4/4"}, "--shard"},
		{"shard without a count", []string{"--shard", "1"}, "want I/N"},
		{"start-at not RFC 3339", []string{"--start-at", "9am"}, "RFC 3339"},
		{"start-every alone", []string{"--start-every", "1m"}, "give --start-at too"},
		{"objective on a shard", []string{"--shard", "0/2", "--slo", "ttft p95 <= 1s"}, "judge the merged run with report"},
		{"cap below the workers", []string{"--shard", "0/4", "--rate", "1", "--max-concurrency", "3"}, "--max-concurrency 3 is split across 4 workers"},
		// Points bounded by request counts cannot be spaced by a guess.
		{"marks without spacing", []string{"--start-at", "2026-01-01T00:00:00Z", "--concurrency", "1,2", "--tokenizer", "cl100k_base"}, "Error: --start-every"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, append([]string{"run"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tt.name, code, stderr, tt.want)
		}
	}
}

// TestRunShardRecordsItsPart: a worker of a closed loop sends its users'
// quota, and run.json names the shard, the marks and when each point began;
// a mark already passed starts at once, with a warning.
func TestRunShardRecordsItsPart(t *testing.T) {
	s := &scripted{ttft: 5 * time.Millisecond, gap: time.Millisecond, tokens: 2, prompt: 8}
	url := newScripted(t, s)
	dir := filepath.Join(t.TempDir(), "w1")
	past := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	code, _, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--concurrency", "1,3", "--requests", "10", "--prompt-tokens", "8", "--output-tokens", "2",
		"--tokenizer", "cl100k_base", "--out", dir, "--shard", "1/2",
		"--start-at", past.Format(time.RFC3339), "--start-every", "1ms")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "passed") {
		t.Errorf("a start mark in the past gave no warning: %q", stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run record.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if run.Shard == nil || *run.Shard != (record.RunShard{Index: 1, Count: 2}) || run.StartAt != past.Format(time.RFC3339) {
		t.Fatalf("run.json shard %+v, start_at %q", run.Shard, run.StartAt)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || !strings.Contains(string(sum), "worker 1 of 2 of a sharded run") {
		t.Errorf("summary.json does not say it covers one worker's share: %v", err)
	}
	// c=1: worker 1 of 2 has no user; c=3: users 1 of 3, 10 requests as 4,3,3.
	want := []struct {
		idle bool
		sent int
		mark string
	}{{true, 0, past.Format(time.RFC3339)}, {false, 3, past.Add(time.Millisecond).Format(time.RFC3339Nano)}}
	for i, p := range run.Points {
		if p.Idle != want[i].idle || p.Client.Sent != want[i].sent || p.StartMark != want[i].mark || p.StartedNS <= 0 {
			t.Errorf("point %d: idle %v, sent %d, mark %q, started %d; want %+v", i, p.Idle, p.Client.Sent, p.StartMark, p.StartedNS, want[i])
		}
	}
}

// TestReportSeveralRunsPointsAtCompare: report given separate runs, or a
// run among workers, says what it merges and where comparing is done.
func TestReportSeveralRunsPointsAtCompare(t *testing.T) {
	root := t.TempDir()
	mk := func(name, shard string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		js := `{"schema":"servebench.run/v1","started":"2026-12-01T09:00:00Z"` + shard + `}`
		if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b := mk("a", ""), mk("b", "")
	w := mk("w0", `,"shard":{"index":0,"count":2}`)
	for _, tt := range []struct {
		dirs []string
		want string
	}{
		{[]string{a, b}, a + ", " + b + " are separate runs"},
		{[]string{w, a}, a + " are not workers of a sharded run, as " + w + " is"},
	} {
		code, _, stderr := runMain(t, append([]string{"report"}, tt.dirs...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "servebench compare") {
			t.Errorf("report %v: exit %d, %q; want exit 2 saying %q and pointing at compare", tt.dirs, code, stderr, tt.want)
		}
	}
}

// TestReportMergesShardsInEveryFormat: the workers of one run merge into
// one run in the table formats (with the workers table) and as one HTML
// page, not an overlay of two runs.
func TestReportMergesShardsInEveryFormat(t *testing.T) {
	s := &scripted{ttft: 2 * time.Millisecond, gap: time.Millisecond, tokens: 2, prompt: 8}
	url := newScripted(t, s)
	root := t.TempDir()
	var dirs []string
	for i := range 2 {
		dir := filepath.Join(root, "w"+strconv.Itoa(i))
		code, _, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
			"--concurrency", "2", "--requests", "5", "--prompt-tokens", "8", "--output-tokens", "2",
			"--tokenizer", "cl100k_base", "--out", dir, "--shard", strconv.Itoa(i)+"/2")
		if code != 0 {
			t.Fatalf("worker %d: exit %d\n%s", i, code, stderr)
		}
		dirs = append(dirs, dir)
	}
	for format, want := range map[string]string{"markdown": "### Workers (2;", "text": "Workers (2;", "html": "2 workers merged"} {
		code, stdout, stderr := runMain(t, append([]string{"report", "--format", format}, dirs...)...)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("report --format %s of two workers: exit %d, %q in the output %v; stderr %s", format, code, want, strings.Contains(stdout, want), stderr)
		}
	}
	code, stdout, _ := runMain(t, append([]string{"report", "--json"}, dirs...)...)
	if code != 0 || !strings.Contains(stdout, `"completed": 5`) {
		t.Errorf("merged JSON: exit %d, want 5 completed (3 + 2):\n%s", code, stdout)
	}
	// --out writes a new directory, only for a merge.
	out := filepath.Join(root, "merged")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{append([]string{"report", "--out", out}, dirs...), 0, ""},
		{append([]string{"report", "--out", out}, dirs...), ExitUsage, "already holds a run"},
		{[]string{"report", "--out", out, dirs[0]}, ExitUsage, "--out writes the merged run"},
	} {
		code, _, stderr := runMain(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}
