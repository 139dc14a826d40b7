package cli

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/bench"
)

// planOf parses run's flags and plans the run.
func planOf(t *testing.T, args ...string) (*bench.Plan, error) {
	t.Helper()
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.define(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.plan(nil)
}

// TestMatrixPlan: repeated length flags run the cross product, workload
// major, every load within each cell, each point with its cell's label.
func TestMatrixPlan(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string // the points' Load.Label(), in run order
	}{
		// one workload: no label, as before the matrix
		{"single", []string{"--concurrency", "1,4"}, []string{"c=1", "c=4"}},
		{"the issue's", []string{"--prompt-tokens", "128", "--prompt-tokens", "2048", "--prompt-tokens", "lognormal:8192,2048",
			"--output-tokens", "64", "--output-tokens", "512", "--concurrency", "1,4,16"}, []string{
			"in=128 out=64 c=1", "in=128 out=64 c=4", "in=128 out=64 c=16",
			"in=128 out=512 c=1", "in=128 out=512 c=4", "in=128 out=512 c=16",
			"in=2048 out=64 c=1", "in=2048 out=64 c=4", "in=2048 out=64 c=16",
			"in=2048 out=512 c=1", "in=2048 out=512 c=4", "in=2048 out=512 c=16",
			"in=lognormal:8192,2048 out=64 c=1", "in=lognormal:8192,2048 out=64 c=4", "in=lognormal:8192,2048 out=64 c=16",
			"in=lognormal:8192,2048 out=512 c=1", "in=lognormal:8192,2048 out=512 c=4", "in=lognormal:8192,2048 out=512 c=16"}},
		// open loop crossed alike; the default prompt fills the missing side
		{"rates", []string{"--output-tokens", "64", "--output-tokens", "512", "--rate", "1,2", "--max-concurrency", "8"},
			[]string{"in=512 out=64 r=1/s ≤8", "in=512 out=64 r=2/s ≤8", "in=512 out=512 r=1/s ≤8", "in=512 out=512 r=2/s ≤8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := planOf(t, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, pt := range p.Points {
				got = append(got, pt.Load.Label())
				if pt.Index != i || pt.Seed != 1+uint64(i) || pt.Requests != bench.DefaultRequests {
					t.Errorf("point %d: index %d seed %d requests %d", i, pt.Index, pt.Seed, pt.Requests)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("points\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestMatrixPlanErrors: what cannot be crossed is refused before any load,
// naming the flag.
func TestMatrixPlanErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-tokens", "128", "--prompt-tokens", "128"}, `--prompt-tokens: "128" repeats "128"`},
		{[]string{"--output-tokens", "64", "--output-tokens", "zipf:2"}, "--output-tokens: length distribution"},
		{[]string{"--prompt-tokens", "128", "--prompt-tokens", "256", "--dataset", "x.jsonl"}, "--dataset: cannot be crossed"},
		{[]string{"--prompt-tokens", "128", "--prompt-tokens", "256", "--multi-turn", "3"}, "--multi-turn: cannot be crossed"},
		{[]string{"--output-tokens", "64", "--output-tokens", "128", "--long-context", "4096"}, "--long-context: cannot be crossed"},
		{[]string{"--prompt-tokens", "128", "--prompt-tokens", "1024", "--shared-prefix", "256"}, "workload in=128 out=128: --shared-prefix: 256"},
	} {
		_, err := planOf(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.args, err, c.want)
		}
	}
}

// TestMatrixObjectiveOverlay: an objective's list of workloads is run as
// listed unless length flags are given, which replace it (crossed with
// the objective's other length when only one flag is given).
func TestMatrixObjectiveOverlay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(file, []byte("name: m\nload: {concurrency: [1, 2]}\nslos: [ttft p95 <= 1s]\n"+
		"workloads:\n  - {prompt_tokens: 2048, output_tokens: 512}\n  - {prompt_tokens: 128, output_tokens: 64}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string // the cells planned, which the objective lists too
	}{
		// the file's list, in its order (not a cross product)
		{"listed", []string{"--objective", file}, []string{"in=2048 out=512", "in=128 out=64"}},
		// flags replace the list; the missing length is the default
		{"flags", []string{"--objective", file, "--output-tokens", "8", "--output-tokens", "16"}, []string{"in=512 out=8", "in=512 out=16"}},
		// a preset with one workload: repeated prompts cross its output length
		{"preset", []string{"--objective", "chat", "--prompt-tokens", "128", "--prompt-tokens", "256"},
			[]string{"in=128 out=lognormal:256,192,16,1024", "in=256 out=lognormal:256,192,16,1024"}},
		// one length each: no matrix
		{"single", []string{"--objective", file, "--prompt-tokens", "64", "--output-tokens", "8"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f runFlags
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			f.define(fs)
			if err := fs.Parse(c.args); err != nil {
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
			var planned, listed []string
			for _, cell := range p.Cells {
				planned = append(planned, cell.Label())
			}
			for _, cell := range o.Workloads {
				listed = append(listed, cell.Label())
			}
			if len(p.Cells) == 1 {
				planned = nil
			}
			if !reflect.DeepEqual(planned, c.want) || !reflect.DeepEqual(listed, c.want) {
				t.Errorf("planned %q, objective lists %q; want %q", planned, listed, c.want)
			}
			if c.want != nil && (o.Workload.PromptTokens != "" || o.Workload.OutputTokens != "") {
				t.Errorf("a matrix objective keeps lengths outside its list: %+v", o.Workload)
			}
		})
	}
}

// TestMatrixEachPointIsAPoint: --duration and --warmup apply to every cell
// × load, as to every load of a one-workload run.
func TestMatrixEachPointIsAPoint(t *testing.T) {
	p, err := planOf(t, "--prompt-tokens", "32", "--prompt-tokens", "64", "--concurrency", "1,2", "--duration", "2s", "--warmup", "3")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 4 {
		t.Fatalf("%d points", len(p.Points))
	}
	for _, pt := range p.Points {
		if pt.Duration != 2*time.Second || pt.Requests != 0 || pt.WarmupRequests != 3 {
			t.Errorf("%s: duration %v requests %d warm-up %d", pt.Load.Label(), pt.Duration, pt.Requests, pt.WarmupRequests)
		}
	}
}
