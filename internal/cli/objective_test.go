package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/slo"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "objective", name)
	if *updateGolden {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestObjectiveListAndShow(t *testing.T) {
	code, out, stderr := runMain(t, "objective", "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	goldenFile(t, "list.golden", out)
	for _, name := range slo.PresetNames {
		code, out, stderr = runMain(t, "objective", "show", name)
		if code != 0 {
			t.Fatalf("show %s: exit %d: %s", name, code, stderr)
		}
		goldenFile(t, "show-"+name+".golden", out)
		// What show prints is a valid objective file.
		if _, err := slo.ParseObjective([]byte(out)); err != nil {
			t.Errorf("show %s does not parse back: %v", name, err)
		}
	}
	for _, args := range [][]string{{"objective", "show", "nope"}, {"objective"}, {"objective", "frob"}} {
		if code, _, stderr := runMain(t, args...); code != ExitUsage || !strings.Contains(stderr, "Try:") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestRunObjectiveErrors: a bad objective file is a usage error naming
// the field and line, before anything is measured.
func TestRunObjectiveErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nload:\n  concurrency: [1, 2]\nslos:\n  - ttft p95 <= 1s\n  - speed p95 <= 20 tok/s\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--objective", bad}, "line 6: slos[1]"},
		{[]string{"--objective", "no-such-preset"}, "no such file or preset"},
		{[]string{"--objective", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"--find-capacity"}, "give --objective or --slo"},
		{[]string{"--slo", "ttft p95 => 1s"}, `--slo: SLO "ttft p95 => 1s": comparison`},
		{[]string{"--objective", "chat", "--repeat", "0"}, "--repeat 0"},
		{[]string{"--objective", "chat", "--concurrency", "2", "--target-load", "2.5"}, "load.target"},
		{[]string{"--objective", "chat", "--prompt-tokens", "zipf:1"}, "prompt_tokens"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, append([]string{"run"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestObjectiveOverlay: flags override single fields of an objective, and
// its fields fill in the flags that were not given.
func TestObjectiveOverlay(t *testing.T) {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.define(fs)
	if err := fs.Parse([]string{"--objective", "chat", "--output-tokens", "64", "--concurrency", "3,6",
		"--slo", "ttft p95 <= 250ms", "--slo", "tpot p90 <= 20ms"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.objective(fs)
	if err != nil {
		t.Fatal(err)
	}
	if f.promptTokens.String() != "lognormal:1024,768,32,8192" || o.Workload.OutputTokens != "64" || f.outputTokens.String() != "64" {
		t.Errorf("workload: flags %q %q, objective %+v", f.promptTokens.String(), f.outputTokens.String(), o.Workload)
	}
	if f.requests != 100 || f.concurrency != "3,6" || len(o.Load.Concurrency) != 2 || o.Load.Target != 8 {
		t.Errorf("load: requests %d concurrency %q, objective %+v", f.requests, f.concurrency, o.Load)
	}
	var exprs []string
	for _, s := range o.SLOs {
		exprs = append(exprs, s.Expr)
	}
	if got := strings.Join(exprs, "; "); got != "ttft p95 <= 250ms; speed p95 >= 10 tok/s; itl p99 <= 200ms; e2e p99 <= 60s; error_rate <= 0.1%; tpot p90 <= 20ms" {
		t.Errorf("SLOs: %s", got)
	}
	// Switching to an open loop drops a concurrency target.
	var g runFlags
	fs = flag.NewFlagSet("run", flag.ContinueOnError)
	g.define(fs)
	fs.Parse([]string{"--objective", "chat", "--rate", "1,2"})
	o, err = g.objective(fs)
	if err != nil || o.Load.Target != 0 || !o.Load.Open() {
		t.Errorf("rate override: %+v %v", o.Load, err)
	}
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `"rate":[1,2]`) {
		t.Errorf("objective JSON: %s", b)
	}
}
