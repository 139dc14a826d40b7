package cli

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

// docs/WORKLOADS.md documents every trace flag.
func TestTraceFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/WORKLOADS.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f traceFlags
	f.define(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(string(doc), "`--"+fl.Name) {
			t.Errorf("docs/WORKLOADS.md does not document --%s", fl.Name)
		}
	})
}

// Flags that choose loads or lengths are refused beside --trace, naming
// the flag; --context-tokens, --max-concurrency and the objective's flags
// are honoured.
func TestTraceConflicts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" for none
	}{
		{[]string{"--concurrency", "4"}, "--concurrency cannot be used with --trace"},
		{[]string{"--requests", "10"}, "--requests cannot be used with --trace"},
		{[]string{"--prompt-tokens", "100"}, "--prompt-tokens cannot be used with --trace"},
		{[]string{"--shared-prefix", "100"}, "--dataset, --shared-prefix, --multi-turn or --long-context cannot be used"},
		{[]string{"--arrival", "gamma"}, "--arrival cannot be used with --trace"},
		{[]string{"--shard", "1/2"}, "--shard cannot be used with --trace"},
		{[]string{"--context-tokens", "8192", "--max-concurrency", "4", "--arrival", "poisson"}, ""},
		// an objective judges the replay (bench.Plan.JudgeTrace)
		{[]string{"--slo", "ttft p95 <= 1s", "--find-capacity", "--repeat", "2", "--target-load", "3"}, ""},
	} {
		var f runFlags
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.define(fs)
		if err := fs.Parse(append([]string{"--trace", "x.jsonl"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		err := f.traceConflicts()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
