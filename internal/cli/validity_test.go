package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/slo"
)

// report judges recorded runs as run did: a point run.json marks
// superseded (a capacity probe measured again) is set aside, and a pass
// on too few samples for its percentile is INCONCLUSIVE, exit 4.
func TestReportValidity(t *testing.T) {
	s := &scripted{ttft: 20 * time.Millisecond, gap: 5 * time.Millisecond, tokens: 4, prompt: 8}
	url := newScripted(t, s)
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
		"--concurrency", "1", "--requests", "4", "--repeat", "2", "--prompt-tokens", "8", "--output-tokens", "4",
		"--tokenizer", "cl100k_base", "--out", dir, "--slo", "ttft p50 <= 5s")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	judged := func() slo.PointVerdict {
		t.Helper()
		code, out, stderr := runMain(t, "report", "--json", "--slo", "ttft p50 <= 5s", dir)
		var rep struct{ Verdict slo.Verdict }
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Verdict.Points) != 1 {
			t.Fatalf("report: exit %d (%v)\n%s", code, err, stderr)
		}
		return rep.Verdict.Points[0]
	}
	if pv := judged(); !slices.Equal(pv.Points, []int{0, 1}) {
		t.Fatalf("points %v, want both repeats", pv.Points)
	}
	path := filepath.Join(dir, "run.json")
	b, _ := os.ReadFile(path)
	var run map[string]any
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	run["points"].([]any)[0].(map[string]any)["superseded"] = true
	b, _ = json.Marshal(run)
	os.WriteFile(path, b, 0o644)
	if pv := judged(); !slices.Equal(pv.Points, []int{1}) || pv.Requests != 8 {
		t.Errorf("points %v, %d requests: want the later point alone", pv.Points, pv.Requests)
	}

	// 8 requests measure a p50, not a p99
	code, out, stderr := runMain(t, "report", "--slo", "ttft p99 <= 5s", dir)
	if code != ExitInconclusive || !strings.Contains(stderr, "INCONCLUSIVE at concurrency 1: few_samples: too few values: ttft p99 on 8 of the 100 it needs") ||
		!strings.Contains(out, "OBJECTIVE INCONCLUSIVE at concurrency 1: few_samples") {
		t.Errorf("thin p99: exit %d\n%s\n%s", code, out, stderr)
	}
	// a tail that already misses on few requests misses: NOT MET, exit 3
	if code, _, stderr := runMain(t, "report", "--slo", "ttft p99 <= 1ms", dir); code != ExitObjective {
		t.Errorf("thin failing p99: exit %d\n%s", code, stderr)
	}
}
