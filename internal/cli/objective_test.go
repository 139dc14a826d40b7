package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/workload"
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

// TestObjectiveFlagsPlanTheRun: the run is planned from the objective
// the flags resolve (slo.Resolve): flags given replace its fields, and
// its fields stand for the flags not given.
func TestObjectiveFlagsPlanTheRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "o.yaml")
	if err := os.WriteFile(file, []byte("name: o\nworkload: {prompt_tokens: 256}\nload: {concurrency: [1, 2], target: 2, requests: 7, warmup: 3}\n"+
		"slos: [ttft p95 <= 1s, e2e p99 <= 9s]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.define(fs)
	if err := fs.Parse([]string{"--objective", file, "--output-tokens", "64", "--concurrency", "3,6",
		"--shared-prefix", "16", "--slo", "ttft p95 <= 250ms", "--slo", "tpot p90 <= 20ms"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.objective(fs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.PromptTokens != "256" || p.Spec.OutputTokens != "64" || p.Spec.SharedPrefix != 16 || o.Workload.SharedPrefix != 16 {
		t.Errorf("workload: planned %+v, objective %+v", p.Spec, o.Workload)
	}
	var loads []string
	for _, pt := range p.Points {
		loads = append(loads, pt.Load.Label())
		if pt.Requests != 7 || pt.WarmupRequests != 3 {
			t.Errorf("%s: requests %d warm-up %d, want the objective's 7 and 3", pt.Load.Label(), pt.Requests, pt.WarmupRequests)
		}
	}
	if strings.Join(loads, " ") != "c=3 c=6" || o.Load.Target != 2 {
		t.Errorf("load: planned %q, objective %+v", loads, o.Load)
	}
	var exprs []string
	for _, s := range o.SLOs {
		exprs = append(exprs, s.Expr)
	}
	if got := strings.Join(exprs, "; "); got != "ttft p95 <= 250ms; e2e p99 <= 9s; tpot p90 <= 20ms" {
		t.Errorf("SLOs: %s", got)
	}
	// Switching to an open loop drops a concurrency target.
	var g runFlags
	fs = flag.NewFlagSet("run", flag.ContinueOnError)
	g.define(fs)
	fs.Parse([]string{"--objective", "chat", "--rate", "1,2", "--duration", "5s"})
	o, err = g.objective(fs)
	if err != nil || o.Load.Target != 0 || !o.Load.Open() {
		t.Fatalf("rate override: %+v %v", o.Load, err)
	}
	if p, err = g.plan(o); err != nil || len(p.Points) != 2 || p.Points[1].Load.Rate != 2 || p.Points[1].Duration != 5*time.Second || p.Points[1].Requests != 0 {
		t.Errorf("rate override planned %+v, %v", p.Points, err)
	}
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `"rate":[1,2]`) {
		t.Errorf("objective JSON: %s", b)
	}
}

// TestWorkloadFlagsOverrideTheObjective: every workload flag other than
// the lengths (which make a matrix) and the client's own overrides a
// field of an objective's workload, and together they override every
// field but the lengths.
func TestWorkloadFlagsOverrideTheObjective(t *testing.T) {
	var full workload.Spec // every field set
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(1)
		default:
			t.Fatalf("workload.Spec.%s: a %v field this test cannot fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.defineWorkload(fs)
	var all []string
	fs.VisitAll(func(fl *flag.Flag) {
		switch fl.Name {
		case "prompt-tokens", "output-tokens", "tokenizer", "ignore-eos":
			return
		}
		all = append(all, fl.Name)
		if (workload.Spec{}).Override(full, []string{fl.Name}) == (workload.Spec{}) {
			t.Errorf("--%s overrides no field of an objective's workload", fl.Name)
		}
	})
	want := full
	want.PromptTokens, want.OutputTokens = "", ""
	if got := (workload.Spec{}).Override(full, all); got != want {
		t.Errorf("the workload flags override %+v, want every field but the lengths", got)
	}
}
